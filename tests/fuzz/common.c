/* common.c - scratch files for fuzz targets (fuzz.h). */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bfi.h"
#include "fuzz.h"

volatile int fuzz_sink;

static char dir[512];

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	remove(path);
	return 0;
}

/* The scratch directory goes when the process exits, so runs leave no litter. */
static void remove_dir(void)
{
	nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

const char *fuzz_dir(void)
{
	if (!dir[0]) {
		const char *t = getenv("TMPDIR");
		snprintf(dir, sizeof dir, "%s/bfi-fuzz-%s-XXXXXX", t && *t ? t : "/tmp", fuzz_name);
		if (mkdtemp(dir) == NULL)
			abort();
		atexit(remove_dir);
	}
	return dir;
}

const char *fuzz_index(const uint8_t *data, size_t size)
{
	static char snap[600];
	if (fuzz_file("snap/index.bfi", data, size) == NULL)
		return NULL;
	snprintf(snap, sizeof snap, "%s/snap", fuzz_dir());
	return snap;
}

const char *fuzz_file(const char *name, const uint8_t *data, size_t size)
{
	static char path[1024];
	snprintf(path, sizeof path, "%s/%s", fuzz_dir(), name);
	char *slash = strrchr(path, '/');
	if (slash && slash > path + strlen(fuzz_dir())) { /* a sub-directory: make it */
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	FILE *f = fopen(path, "wb");
	if (f == NULL)
		return NULL;
	int ok = fwrite(data, 1, size, f) == size;
	if (fclose(f) != 0 || !ok)
		return NULL;
	return path;
}

void fuzz_queries(const bfi_snapshot *s)
{
	bfi_result *r;
	if (bfi_result_create(&r) != 0)
		return;
	static const char *const keys[] = {"apple", "lmdb", "k1", "k2", "shared3-key0", "", "x"};
	static const unsigned layouts[] = {BFI_LAYOUT_FLAT, BFI_LAYOUT_PLAIN, BFI_LAYOUT_RAMBO,
	                                   BFI_LAYOUT_TREE};
	struct bfi_info in;
	bfi_info(s, &in);
	bfi_expr *e = NULL, *t = NULL;
	const char *text = "(apple AND k1) OR lmdb OR (x AND NOT_A_KEY)";
	TRY(bfi_expr_parse(text, strlen(text), &e, NULL));
	const void *tk[3] = {"apple", "k2", "x"};
	size_t tl[3] = {5, 2, 1};
	TRY(bfi_expr_terms(tk, tl, 3, &t));
	bfi_keyhash hs[sizeof keys / sizeof *keys];
	size_t ends[sizeof keys / sizeof *keys];
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
		hs[i] = bfi_hash_key(keys[i], strlen(keys[i]));
	for (size_t l = 0; l < sizeof layouts / sizeof *layouts; l++) {
		if (!(in.layouts & layouts[l]))
			continue;
		for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
			TRY(bfi_query_key_layout(s, layouts[l], keys[i], strlen(keys[i]), r));
		/* every key in one call: its own loop on one block of short rows */
		TRY(bfi_query_keys(s, layouts[l], hs, sizeof keys / sizeof *keys, r, ends));
		if (e)
			TRY(bfi_query_expr(s, layouts[l], e, r));
		if (t)
			TRY(bfi_query_threshold(s, layouts[l], t, 0.5, r));
	}
	if (e && (in.layouts & BFI_LAYOUT_FLAT)) {
		/* keys and an expression in one batch: both batch paths */
		enum { NB = 5 };
		bfi_expr *k[NB - 1] = {NULL};
		const bfi_expr *es[NB];
		bfi_result *rs[NB] = {NULL};
		int ok = 1;
		for (int i = 0; i < NB - 1 && ok; i++)
			ok = bfi_expr_key(keys[i], strlen(keys[i]), &k[i]) == 0;
		for (int i = 0; i < NB && ok; i++) {
			es[i] = i == 2 ? e : k[i < 2 ? i : i - 1];
			ok = bfi_result_create(&rs[i]) == 0;
		}
		if (ok)
			TRY(bfi_query_batch(s, BFI_LAYOUT_FLAT, es, NB, rs));
		for (int i = 0; i < NB; i++) {
			bfi_result_destroy(&rs[i]);
			if (i < NB - 1)
				bfi_expr_free(&k[i]);
		}
	}
	bfi_expr_free(&e);
	bfi_expr_free(&t);
	bfi_result_destroy(&r);
}

void fuzz_inspect(const bfi_snapshot *s)
{
	struct bfi_layout_info li[3] = {{0}};
	static const unsigned which[3] = {BFI_LAYOUT_TREE, BFI_LAYOUT_RAMBO, BFI_LAYOUT_FLAT};
	for (int i = 0; i < 3; i++)
		if (bfi_layout_info(s, which[i], &li[i]) != 0)
			memset(&li[i], 0, sizeof li[i]);
	for (uint32_t l = 0; l < li[0].u.tree.levels; l++) {
		uint64_t nodes, m;
		double fill, fpr;
		TRY(bfi_tree_level(s, l, &nodes, &m, &fill, &fpr));
	}
	struct bfi_rambo_cell_info *cells = calloc(li[1].u.rambo.cells ? li[1].u.rambo.cells : 1, sizeof *cells);
	for (uint32_t r = 0; cells && r < li[1].u.rambo.reps; r++) {
		uint64_t m;
		TRY(bfi_rambo_rep(s, r, &m, cells));
	}
	free(cells);
	for (uint32_t b = 0; b < li[2].u.flat.blocks; b++) {
		struct bfi_block_info bi;
		TRY(bfi_block(s, b, &bi));
	}
}
