/* cmd_build.c - bfi build: write a snapshot. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "bfi_paths.h"
#include "bfi_writer.h"
#include "build_args.h"
#include "tools.h"

struct ctx {
	struct progress p;
};

static void on_progress(void *c, const char *phase, uint64_t done, uint64_t total)
{
	progress_show(&((struct ctx *)c)->p, phase, done, total);
}

/* --stats: each phase, and the whole build, as wall, CPU, busiest thread and their ratio. */
static void print_stats(const bfi_writer *w, const char *cmd)
{
	struct bfi_phase_stats ph;
	double wall = 0, cpu = 0, busiest = 0;
	fprintf(stderr, "%s: %-11s %8s %8s %9s %13s\n", cmd, "phase", "wall s", "cpu s", "busiest s",
	        "cpu/busiest");
	for (unsigned i = 0; bfi_writer_phase(w, i, &ph) == 0; i++) {
		fprintf(stderr, "%s: %-11s %8.3f %8.3f %9.3f %12.2fx\n", cmd, ph.name, ph.wall, ph.cpu,
		        ph.busiest, ph.busiest > 0 ? ph.cpu / ph.busiest : 1.0);
		wall += ph.wall;
		cpu += ph.cpu;
		busiest += ph.busiest;
	}
	fprintf(stderr, "%s: %-11s %8.3f %8.3f %9.3f %12.2fx\n", cmd, "all", wall, cpu, busiest,
	        busiest > 0 ? cpu / busiest : 1.0);
}

/*
 * --min-count: the distinct keys the sets' files gave and those kept, in
 * all, for the summary line (as "; ..."); with each (at most PER_SET of
 * them, else the sets that kept the least and the most of theirs) for
 * --stats.
 */
#define PER_SET 32
static void print_counted(const bfi_writer *w, uint32_t least, int each, char *line, size_t cap)
{
	const char *name, *lo_name = "", *hi_name = "";
	size_t len, lo_len = 0, hi_len = 0;
	uint64_t seen, kept, all_seen = 0, all_kept = 0, n = 0;
	double lo = 2, hi = -1;
	for (uint64_t i = 0; bfi_writer_counted(w, i, &name, &len, &seen, &kept) == 0; i++, n++) {
		all_seen += seen;
		all_kept += kept;
		double share = seen ? (double)kept / (double)seen : 1.0;
		if (share < lo)
			lo = share, lo_name = name, lo_len = len;
		if (share > hi)
			hi = share, hi_name = name, hi_len = len;
	}
	if (n == 0)
		return;
	double dropped = all_seen ? 100.0 * (double)(all_seen - all_kept) / (double)all_seen : 0.0;
	snprintf(line, cap, "; --min-count %u kept %llu of the %llu distinct keys the sets' files gave "
	         "(dropped %llu, %.1f%%)", least, (unsigned long long)all_kept,
	         (unsigned long long)all_seen, (unsigned long long)(all_seen - all_kept), dropped);
	if (!each)
		return;
	fprintf(stderr, "%s: %-11s %12s %12s %12s\n", build_me, "set", "seen", "kept", "dropped");
	for (uint64_t i = 0; n <= PER_SET && bfi_writer_counted(w, i, &name, &len, &seen, &kept) == 0;
	     i++)
		fprintf(stderr, "%s: %-11.*s %12llu %12llu %12llu\n", build_me, (int)len, name,
		        (unsigned long long)seen, (unsigned long long)kept,
		        (unsigned long long)(seen - kept));
	if (n > PER_SET)
		fprintf(stderr, "%s: %llu sets kept from %.1f%% (%.*s) to %.1f%% (%.*s) of their distinct "
		        "keys\n", build_me, (unsigned long long)n, 100 * lo, (int)lo_len, lo_name, 100 * hi,
		        (int)hi_len, hi_name);
	fprintf(stderr, "%s: %-11s %12llu %12llu %12llu\n", build_me, "all", (unsigned long long)all_seen,
	        (unsigned long long)all_kept, (unsigned long long)(all_seen - all_kept));
}

/* --stats: the memory the build held itself to, and where the figure came from. */
static void print_memory(const char *cmd, uint64_t memory, int given)
{
	struct bfi_memory_limits l;
	bfi_memory_limits(&l);
	if (given)
		fprintf(stderr, "%s: memory      %.1f MiB (--memory)\n", cmd, (double)memory / (1 << 20));
	else
		fprintf(stderr, "%s: memory      %.1f MiB (the default: a quarter of the machine's "
		        "%.1f GiB, at most half of the %s, %.1f MiB)\n", cmd, (double)memory / (1 << 20),
		        (double)l.physical / (1u << 30), bfi_memory_bound_name(l.bound),
		        (double)l.usable / (1 << 20));
}

/* The writer's warnings from byte from on; returns where they end. */
static size_t print_warnings(const bfi_writer *w, size_t from)
{
	const char *all = bfi_writer_warnings(w);
	size_t len = strlen(all);
	for (const char *p = all + from; *p;) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);
		fprintf(stderr, "%s: warning: %.*s\n", build_me, (int)l, p);
		p += l + (nl != NULL);
	}
	return len;
}

/*
 * --fof FILE: a set a line, "NAME: PATH[; PATH...]" (kmindex's file of
 * files), blank lines and # comments skipped; a relative PATH is of FILE's
 * directory. Each set is its files read as one (bfi_writer_add_group).
 * 0, or an error said (writer_fail'd, or here for the file's own lines).
 */
static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
		s[--n] = 0;
	return s;
}

static int add_fof(bfi_writer *w, const char *fof, const char *input, unsigned k)
{
	FILE *f = fopen(fof, "r");
	if (f == NULL) {
		fprintf(stderr, "%s: --fof %s: %s\n", build_me, fof, strerror(errno));
		return EXIT_USAGE;
	}
	const char *slash = strrchr(fof, '/');
	size_t dir = slash ? (size_t)(slash - fof) + 1 : 0; /* FILE's directory, with its slash */
	char *line = NULL, **paths = NULL;
	size_t cap = 0, lineno = 0, sets = 0;
	int rc = 0;
	while (rc == 0 && getline(&line, &cap, f) > 0) {
		lineno++;
		char *l = trim(line), *colon = strchr(l, ':');
		if (*l == 0 || *l == '#')
			continue;
		if (colon == NULL) {
			fprintf(stderr, "%s: %s:%zu: no ':' between a set's name and its files\n", build_me, fof,
			        lineno);
			rc = EXIT_USAGE;
			break;
		}
		*colon = 0;
		char *name = trim(l), *save = NULL;
		size_t n = 0;
		for (char *p = strtok_r(colon + 1, ";", &save); p && rc == 0; p = strtok_r(NULL, ";", &save)) {
			p = trim(p);
			if (*p == 0)
				continue;
			char **grown = realloc(paths, (n + 1) * sizeof *paths);
			char *full = grown ? malloc(dir + strlen(p) + 1) : NULL;
			if (grown)
				paths = grown;
			if (full == NULL) {
				rc = -ENOMEM;
				break;
			}
			if (*p == '/')
				strcpy(full, p);
			else
				sprintf(full, "%.*s%s", (int)dir, fof, p);
			paths[n++] = full;
		}
		if (rc == 0 && (*name == 0 || n == 0)) {
			fprintf(stderr, "%s: %s:%zu: a set needs a name and at least one file\n", build_me, fof,
			        lineno);
			rc = EXIT_USAGE;
		}
		if (rc == 0)
			rc = bfi_writer_add_group(w, name, strlen(name), (const char *const *)paths, n,
			                          input, k);
		sets += rc == 0;
		for (size_t i = 0; i < n; i++)
			free(paths[i]);
	}
	if (rc == 0 && ferror(f)) {
		fprintf(stderr, "%s: --fof %s: %s\n", build_me, fof, strerror(errno));
		rc = EXIT_USAGE;
	}
	if (rc == 0 && sets == 0) {
		fprintf(stderr, "%s: --fof %s names no set\n", build_me, fof);
		rc = EXIT_USAGE;
	}
	free(paths);
	free(line);
	fclose(f);
	return rc;
}


/* The sets of the inputs into w, as their kind says: 0, or an error (1: said). */
static int add_inputs(bfi_writer *w, const struct args *a, int argc, char **argv)
{
	if (a->fof) /* a file of files, of keys or of FASTA */
		return add_fof(w, a->fof, !a->in ? "keys" : a->protein ? "protein" : "fasta", a->kmer);
	const struct input_kind *k = a->in ? a->in : input_kind("keys");
	int rc = 0;
	for (int i = optind; i < argc && rc == 0 && (k->many || i == optind); i++)
		rc = k->add(w, a, argv[i]);
	return rc;
}

/* The line that says what was written: the layouts read back from the index alone. */
static void say_written(const struct args *a, const struct bfi_build_summary *sum,
                        const char *counted)
{
	char held[128] = "?";
	bfi_snapshot *snap = NULL;
	if (bfi_open(a->out, BFI_OPEN_NO_CATALOG, &snap) == 0) {
		struct bfi_info in;
		bfi_info(snap, &in);
		layout_names(in.layouts, ",", held, sizeof held);
		bfi_close(&snap);
	}
	fprintf(stderr,
	        "%s: wrote %s: %llu sets, %llu keys (%llu distinct set/key pairs), "
	        "largest set %llu keys, k=%u, layout %s (%u flat blocks), widest m=%llu bits; "
	        "index %llu bytes, catalog %llu bytes%s\n", build_me,
	        a->out, (unsigned long long)sum->n_sets, (unsigned long long)sum->keys_in,
	        (unsigned long long)sum->distinct_pairs, (unsigned long long)sum->max_set_keys,
	        sum->hashes, held, sum->blocks, (unsigned long long)sum->bits,
	        (unsigned long long)sum->index_bytes, (unsigned long long)sum->catalog_bytes, counted);
}

int cmd_build(int argc, char **argv)
{
	build_me = argc > 0 && !strcmp(argv[0], "bfi append") ? "bfi append" : "bfi build";
	static struct args a; /* its layout_opts outlive the call, as the writer's options point there */
	memset(&a, 0, sizeof a);
	bfi_build_options_init(&a.o);
	struct opt_cmd cmd = build_cmd;
	cmd.me = build_me;
	int rc = opts_parse(&cmd, argc, argv, &a);
	if (rc)
		return rc - 1;
	if ((rc = build_check(&a, argc)) != 0)
		return rc;
	struct ctx ctx;
	progress_init(&ctx.p, a.quiet);
	a.o.progress = on_progress;
	a.o.progress_ctx = &ctx;
	bfi_writer *w = NULL;
	rc = bfi_writer_create(&a.o, &w);
	if (rc == BFI_E_LIMIT) /* the only limit the options alone can pass */
		fprintf(stderr, "%s: --expected-keys %llu: each filter would need more than "
		                "2^40 bits\n", build_me, (unsigned long long)a.o.expected_keys);
	else if (rc)
		fprintf(stderr, "%s: %s\n", build_me, bfi_strerror(rc));
	if (rc)
		return EXIT_USAGE;
	size_t warned = print_warnings(w, 0);
	rc = add_inputs(w, &a, argc, argv);
	struct bfi_build_summary sum;
	if (rc == 0)
		rc = bfi_writer_finish(w, a.out, &sum);
	progress_done(&ctx.p);
	print_warnings(w, warned);
	if (rc) {
		const char *msg = bfi_writer_errmsg(w);
		if (rc < 0) /* > 0: add_fof or add_inputs said what is wrong */
			fprintf(stderr, "%s: %s\n", build_me, *msg ? msg : bfi_strerror(rc));
		bfi_writer_destroy(&w);
		return EXIT_USAGE;
	}
	char counted[256] = "";
	if (a.stats) {
		print_stats(w, build_me);
		print_memory(build_me, a.o.memory ? a.o.memory : bfi_default_memory(), a.o.memory != 0);
	}
	print_counted(w, a.o.min_count, a.stats, counted, sizeof counted);
	bfi_writer_destroy(&w);
	if (!a.quiet)
		say_written(&a, &sum, counted);
	return EXIT_OK;
}
