/* writer.c - a writer's life: made from its options, and freed with every input it holds. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "layout.h"
#include "sources.h"

/*
 * The process's memory when the build begins, and 2 MiB for the pages the
 * catalog's LMDB and the libraries touch later, at least WRITER_PROGRAM:
 * the budget bounds the whole process.
 */
static uint64_t resident_bytes(void)
{
	unsigned long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "re");
	if (f) {
		if (fscanf(f, "%lu %lu", &size, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	long page = sysconf(_SC_PAGESIZE);
	uint64_t bytes = (uint64_t)resident * (uint64_t)(page > 0 ? page : 4096) + (2ull << 20);
	return bytes > WRITER_PROGRAM ? bytes : WRITER_PROGRAM;
}

int bfi_writer_create(const struct bfi_build_options *o, bfi_writer **out)
{
	if (out == NULL)
		return BFI_E_INVALID;
	*out = NULL;
	struct bfi_build_options def;
	int orc = bfi__build_options(o, &def);
	if (orc)
		return orc;
	o = &def;
	if (!(o->fpr > 0 && o->fpr < 1) || o->bits > BFI_MAX_BITS || o->hashes > BFI_MAX_K ||
	    o->layouts == 0 || (o->layouts != BFI_BUILD_AUTO && (o->layouts & ~wlayouts_all())) ||
	    (o->fanout && (o->fanout < 2 || o->fanout > 64 ||
	                    (!o->bloofi_incremental && (o->fanout & (o->fanout - 1))))) ||
	    o->prefilter < BFI_PREFILTER_AUTO || o->prefilter > BFI_PREFILTER_NEVER ||
	    o->reps > BFI_MAX_REPS || o->cells > BFI_MAX_CELLS ||
	    (o->route_shards && o->route_shard >= o->route_shards) ||
	    o->expected_keys > BFI_MAX_BITS || (o->cells == 1) ||
	    (o->cells && o->shards && o->cells % o->shards) ||
	    (o->keep_order && o->cluster) ||
	    (o->route_shards && !(o->layouts & BFI_BUILD_RAMBO)) ||
	    bfi_layout_options_check(o->layout_options, o->layouts == BFI_BUILD_AUTO ? 0 : o->layouts,
	                             NULL, 0))
		return BFI_E_INVALID;
	int capped = 0;
	uint32_t k = o->hashes ? o->hashes : filter_k(o->fpr, &capped);
	if (o->expected_keys && !o->bits && filter_m(o->expected_keys, k, o->fpr) == 0)
		return BFI_E_LIMIT; /* the filter it asks for would pass 2^40 bits */
	bfi_writer *w = calloc(1, sizeof *w);
	if (w == NULL)
		return -ENOMEM;
	w->opt = *o;
	/* the caller's string, which may not outlive this call */
	if (o->layout_options && (w->opt.layout_options = strdup(o->layout_options)) == NULL) {
		free(w);
		return -ENOMEM;
	}
	/* the default's choice waits for the sets: read as for flat, sketched for either */
	w->auto_layout = o->layouts == BFI_BUILD_AUTO;
	if (w->auto_layout)
		w->opt.layouts = BFI_BUILD_FLAT;
	w->program = resident_bytes();
	pthread_mutex_init(&w->err_lock, NULL);
	/* the insertion build walks the spool itself: every key goes there */
	w->direct = !o->bloofi_incremental;
	if (w->opt.memory == 0)
		w->opt.memory = bfi_default_memory();
	if (w->opt.memory < WRITER_MIN_MEMORY) {
		writer_warn(w, "memory budget %llu bytes is below the least a build needs; using 4 MiB",
		            (unsigned long long)w->opt.memory);
		w->opt.memory = WRITER_MIN_MEMORY;
	}
	if (!o->hashes && !o->bits && capped)
		writer_warn(w, "a rate of %g needs %.0f hashes; bfi uses at most %u, so each filter's "
		               "rate is about 2^-%u (%.2g), not %g",
		            o->fpr, ceil(-log2(o->fpr)), BFI_MAX_K, BFI_MAX_K, ldexp(1, -(int)BFI_MAX_K),
		            o->fpr);
	/* Half the budget buffers keys; the other half holds row stripes. */
	int rc = sums_init(&w->sums, &w->opt, wlayouts_wants(&w->opt, w->auto_layout ? AUTO_LAYOUTS : 0));
	if (rc == 0 && (rc = spool_init(&w->spool, (size_t)(writer_budget(w) / 2 / sizeof(struct rec)),
	                                pool_threads(w->opt.threads))) != 0)
		sums_free(&w->sums);
	if (rc) {
		free((char *)w->opt.layout_options);
		free(w);
		return rc;
	}
	*out = w;
	return 0;
}

void bfi_writer_destroy(bfi_writer **w)
{
	if (w == NULL || *w == NULL)
		return;
	names_free(&(*w)->names);
	for (int i = 0; i < (*w)->n_meta; i++)
		free((*w)->meta[i].val);
	free((*w)->text_stops);
	for (size_t i = 0; i < (*w)->n_filt; i++)
		bfi_filter_destroy(&(*w)->filt[i]);
	free((*w)->filt);
	spool_free(&(*w)->spool);
	sums_free(&(*w)->sums);
	text_free(*w);
	sources_free(*w);
	for (size_t i = 0; i < (*w)->cap_src; i++) {
		free((*w)->src[i].path);
		held_free((*w)->src[i].held);
	}
	free((*w)->src);
	pthread_mutex_destroy(&(*w)->err_lock);
	free((char *)(*w)->opt.layout_options);
	free(*w);
	*w = NULL;
}
