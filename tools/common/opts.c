/* opts.c - a command's options as rows (opts.h): the parser and the help. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"
#include "tools.h"

#define HELP_COLUMN 22 /* where each option's help begins, unless the command says */
#define MAX_ROWS 96

void opts_rows(FILE *o, const struct opt_cmd *cmd)
{
	char fill[64] = "";
	if (cmd->help_fill)
		cmd->help_fill(fill, sizeof fill);
	int col = cmd->column ? cmd->column : HELP_COLUMN;
	for (const struct opt_row *r = cmd->rows; r->name || r->help; r++) {
		if (r->help == NULL)
			continue; /* the usage line's */
		if (r->name == NULL) {
			fputs(r->help, o);
			continue;
		}
		char left[128];
		int n;
		if (cmd->indent)
			n = snprintf(left, sizeof left, "%*s--%s%s%s", cmd->indent, "", r->name,
			             r->arg ? " " : "", r->arg ? r->arg : "");
		else
			n = snprintf(left, sizeof left, "  %c%c%c --%s%s%s", r->key < 256 ? '-' : ' ',
			             r->key < 256 ? r->key : ' ', r->key < 256 ? ',' : ' ', r->name,
			             r->arg ? " " : "", r->arg ? r->arg : "");
		/* the help at its column, or two blanks past a name too long for it */
		const char *h = r->help, *nl = strchr(h, '\n');
		if (*h == '\n') /* a name that takes the line */
			fprintf(o, "%s", left);
		else
			fprintf(o, "%s%*s", left, n + 2 <= col ? col - n : 2, "");
		for (;;) {
			int len = nl ? (int)(nl - h) : (int)strlen(h);
			const char *at = memmem(h, (size_t)len, "%s", 2); /* where the fill goes */
			if (at)
				fprintf(o, "%.*s%s%.*s\n", (int)(at - h), h, fill, len - (int)(at + 2 - h), at + 2);
			else
				fprintf(o, "%.*s\n", len, h);
			if (nl == NULL)
				break;
			h = nl + 1;
			nl = strchr(h, '\n');
			fprintf(o, "%*s", col, "");
		}
	}
}

void opts_help(FILE *o, const struct opt_cmd *cmd)
{
	if (cmd->page) {
		cmd->page(o);
		return;
	}
	fputs(cmd->head, o);
	opts_rows(o, cmd);
	fputs(cmd->tail, o);
}

/* Take row r's argument arg into ctx: 0, or 1 + an exit status. */
static int take(const struct opt_cmd *cmd, const struct opt_row *r, const char *arg, void *ctx)
{
	char *field = (char *)ctx + r->off;
	uint64_t v;
	switch (r->kind) {
	case OPT_FN: {
		int rc = r->fn(ctx, arg);
		return rc ? 1 + rc : 0;
	}
	case OPT_FLAG: *(int *)(void *)field = 1; return 0;
	case OPT_STR: *(const char **)(void *)field = arg; return 0;
	case OPT_U32:
	case OPT_U64:
	case OPT_SIZE:
		if (parse_size(arg, &v) || v < r->lo || v > r->hi) {
			fprintf(stderr, "%s: ", cmd->me);
			fprintf(stderr, r->bad, arg);
			fputc('\n', stderr);
			return 1 + EXIT_USAGE;
		}
		if (r->kind == OPT_U32)
			*(uint32_t *)(void *)field = (uint32_t)v;
		else if (r->kind == OPT_SIZE)
			*(size_t *)(void *)field = (size_t)v;
		else
			*(uint64_t *)(void *)field = v;
		return 0;
	case OPT_HELP: opts_help(stdout, cmd); return 1 + EXIT_OK;
	case OPT_DOC: break;
	}
	return 1 + EXIT_USAGE;
}

int opts_parse(const struct opt_cmd *cmd, int argc, char **argv, void *ctx)
{
	struct option longs[MAX_ROWS + 1];
	char shorts[2 * MAX_ROWS + 1];
	size_t n = 0, s = 0;
	for (const struct opt_row *r = cmd->rows; (r->name || r->help) && n < MAX_ROWS; r++) {
		if (r->name == NULL || r->kind == OPT_DOC)
			continue;
		longs[n++] = (struct option){r->name, r->arg ? required_argument : no_argument, NULL,
		                             r->key};
		if (r->key < 256) {
			shorts[s++] = (char)r->key;
			if (r->arg)
				shorts[s++] = ':';
		}
	}
	longs[n] = (struct option){NULL, 0, NULL, 0};
	shorts[s] = 0;
	optind = 1;
	int c;
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		const struct opt_row *r = cmd->rows;
		while ((r->name || r->help) && (r->name == NULL || r->kind == OPT_DOC || r->key != c))
			r++;
		if (r->name == NULL)
			return 1 + (cmd->unknown ? cmd->unknown(cmd) : usage_try(cmd->me + 4));
		int rc = take(cmd, r, optarg, ctx);
		if (rc)
			return rc;
	}
	return 0;
}

const struct opt_row *opts_find(const struct opt_cmd *cmd, const char *arg)
{
	for (const struct opt_row *r = cmd->rows; r->name || r->help; r++) {
		if (r->name == NULL || r->kind == OPT_DOC)
			continue;
		if ((arg[0] == '-' && arg[1] == '-' && !strcmp(arg + 2, r->name)) ||
		    (r->key < 256 && arg[0] == '-' && arg[1] == r->key && arg[2] == 0))
			return r;
	}
	return NULL;
}

int opts_take_one(const struct opt_cmd *cmd, int argc, char **argv, int *i, void *ctx)
{
	const struct opt_row *r = opts_find(cmd, argv[*i]);
	if (r == NULL)
		return 0;
	const char *arg = NULL;
	if (r->arg && *i + 1 >= argc) {
		fprintf(stderr, "%s: --%s needs %s\n", cmd->me, r->name, r->arg);
		return 2 + usage_try(cmd->me + 4);
	}
	if (r->arg)
		arg = argv[++*i];
	int rc = take(cmd, r, arg, ctx);
	return rc ? 1 + rc : 1;
}
