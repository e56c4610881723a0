/*
 * build.c - a snapshot written in phases (spec/format.md, "File layout"):
 * the sets' summaries (summary.c; files were read on their way in,
 * sources.c), the plan (plan.c and one file per layout), the index's
 * layouts (stripes.c, fill.c), its checksums and the catalog (seal.c),
 * then the header that binds them, and publishing (publish.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "layout.h"
#include "publish.h"
#include "sources.h"

/* What the phases of one finish share. */
struct finish {
	bfi_writer *w;
	const char *path;
	uint64_t n, pairs, max_n;
	struct plan p;
	struct bfi_section sec[BFI_ROWS + 1]; /* the layouts in file order, then the chunk checksums */
	uint32_t n_sec;
	struct bfi_section *of[BFI_ROWS]; /* by wlayouts' index: its section, or NULL */
	struct bfi_section *sumsec;
	uint64_t file_size;
	uint8_t *sums; /* the chunk-checksum section */
	struct staging stage;
	int fd;
	char ipath[4400], cpath[4400];
	struct bfi_header h;
};

/* The output path can take a snapshot. */
static int check_output(struct finish *f)
{
	bfi_writer *w = f->w;
	if (f->n == 0)
		return writer_fail(w, BFI_E_NO_SETS, "the input holds no sets");
	if (strlen(f->path) > 4000)
		return writer_fail(w, BFI_E_INVALID, "output path too long");
	return bfi_output_check(f->path, w->errmsg, sizeof w->errmsg);
}

/* Each set's distinct count and sketches: given, from prebuilt filters, or from the spool. */
static int count_sets(struct finish *f)
{
	bfi_writer *w = f->w;
	/* the sketches of sets known only now (--tsv): room made by spilling the keys, if need be */
	int room = writer_room_for_sets(w, f->n, 1);
	if (room)
		return room;
	if (sums_grow(&w->sums, f->n) != 0)
		return writer_fail(w, -ENOMEM, "out of memory for per-set counts");
	uint64_t *distinct = w->sums.distinct;
	progress(w, "sorting", 0, 0);
	spool_seal(&w->spool);
	int rc = 0;
	for (const struct wlayout *const *l = wlayouts; (w->raw || w->given) && *l; l++)
		if (wlayout_on(*l, w->opt.layouts) && !((*l)->given && (*l)->given(w)))
			return writer_fail(w, BFI_E_INVALID, "every layout of a build from rows must be given");
	if (w->raw || w->given) {
		memcpy(distinct, w->given ? w->given->distinct : w->raw->distinct, f->n * sizeof *distinct);
		for (uint64_t o = 0; o < f->n; o++)
			f->pairs += distinct[o];
	} else if (w->n_filt) {
		/* prebuilt filters: their width, k and key counts; no keys to read */
		struct bfi_filter_stats fs;
		for (uint64_t o = 0; o < f->n; o++) {
			bfi_filter_stats(w->filt[o], &fs);
			distinct[o] = fs.keys;
			f->pairs += fs.keys;
		}
		bfi_filter_stats(w->filt[0], &fs);
		if ((w->opt.bits && w->opt.bits != fs.m) || (w->opt.hashes && w->opt.hashes != fs.k))
			return writer_fail(w, BFI_E_FILTER_MISMATCH, "the filters have m = %llu and k = %u, "
			                   "not the --bits or --hashes given", (unsigned long long)fs.m, fs.k);
		if (w->opt.bloofi_incremental)
			return writer_fail(w, BFI_E_INVALID, "--bloofi-build incremental reads the keys; "
			                                     "filters are indexed offline");
		w->opt.bits = fs.m;
		w->opt.hashes = fs.k;
		w->opt.prefilter = BFI_PREFILTER_NEVER; /* a union at another width needs the keys */
	} else {
		if ((rc = sums_from_spool(w)) != 0)
			return writer_fail(w, rc, "reading spilled keys: %s", bfi_strerror(rc));
		for (uint64_t o = 0; o < f->n; o++)
			f->pairs += distinct[o];
	}
	for (uint64_t o = 0; o < f->n; o++)
		f->max_n = distinct[o] > f->max_n ? distinct[o] : f->max_n;
	return 0;
}

#define ROW(l) (&bfi_layout_rows[(l)->row])

/* The plan, and the sections' places in the file: the layouts in file order, then the checksums. */
static int lay_out(struct finish *f)
{
	bfi_writer *w = f->w;
	if (w->auto_layout)
		w->opt.layouts = auto_layout(w, f->n, f->max_n);
	f->p.n = (uint32_t)f->n;
	f->p.distinct = w->sums.distinct;
	int rc = make_plan(w, &f->p, f->max_n);
	/* what the plan holds by set: its orders and ones, and what each layout's holds */
	const struct plan *p = &f->p;
	w->plan_bytes = f->n * (3 * sizeof(uint32_t) + sizeof(uint64_t));
	for (const struct wlayout *const *l = wlayouts; rc == 0 && *l; l++)
		if (p->own[(*l)->row] && (*l)->held)
			w->plan_bytes += (*l)->held(p);
	if (rc)
		return w->errmsg[0] ? rc
		                    : writer_fail(w, rc, "laying out %llu sets: %s",
		                                  (unsigned long long)f->n, bfi_strerror(rc));
	int basic = 0; /* flat or plain, which every reader knows */
	for (size_t i = 0; wlayouts[i]; i++)
		if (wlayout_on(wlayouts[i], w->opt.layouts)) {
			struct bfi_section *s = f->of[i] = &f->sec[f->n_sec++];
			s->kind = ROW(wlayouts[i])->kind;
			s->size = wlayouts[i]->size(&f->p);
			basic |= !ROW(wlayouts[i])->optional;
		}
	uint64_t at = BFI_SECTION_ALIGN;
	for (size_t i = 0; wlayouts[i]; i++) {
		struct bfi_section *s = f->of[i];
		if (s == NULL)
			continue;
		/* A reader that does not know rambo or the tree may still answer from flat or plain. */
		s->flags = ROW(wlayouts[i])->optional && basic ? 0 : BFI_SECF_REQUIRED;
		s->stored_size = s->size;
		s->offset = at;
		at = bfi_align_up(at + s->size, BFI_SECTION_ALIGN);
	}
	uint64_t chunks = bfi_chunk_count(at);
	f->sumsec = &f->sec[f->n_sec++];
	f->sumsec->kind = BFI_SEC_CHUNKSUMS;
	f->sumsec->flags = BFI_SECF_REQUIRED;
	f->sumsec->offset = at;
	f->sumsec->size = f->sumsec->stored_size = BFI_CHUNKSUMS_DESC_SIZE + chunks * 8;
	f->file_size = at + f->sumsec->size + BFI_TRAILER_SIZE;
	return 0;
}

/* A staging directory beside the path, and the index's layouts written into it. */
/*
 * Memory for the rows: the sketches only planning reads are freed, and if
 * the largest flat block still would not fit, a spool that has spilled
 * spills its buffer too and gives back its half of the budget. Without
 * this a small budget left the rows 2 MiB, and a block was filled in
 * stripes, each a pass over every key.
 */
static int room_for_rows(bfi_writer *w, const struct plan *p)
{
	sums_drop_sketches(&w->sums);
	uint64_t need = 0;
	for (const struct wlayout *const *l = wlayouts; *l; l++) {
		uint64_t n = wlayout_on(*l, w->opt.layouts) && (*l)->need ? (*l)->need(p) : 0;
		need = n > need ? n : need;
	}
	if (need <= writer_budget(w))
		return 0;
	int rc = spool_release(&w->spool);
	return rc ? writer_fail(w, rc, "spilling keys to %s: %s", w->spool.dir, bfi_strerror(rc)) : 0;
}

static int write_index(struct finish *f)
{
	bfi_writer *w = f->w;
	int rc0 = room_for_rows(w, &f->p);
	if (rc0)
		return rc0;
	staging_sweep(f->path); /* what killed builds left beside path */
	int rc = staging_begin(&f->stage, f->path, w->errmsg, sizeof w->errmsg);
	if (rc)
		return rc;
	snprintf(f->ipath, sizeof f->ipath, "%s/%s", f->stage.dir, BFI_INDEX_NAME);
	snprintf(f->cpath, sizeof f->cpath, "%s/%s", f->stage.dir, BFI_CATALOG_NAME);
	f->fd = openat(f->stage.dfd, BFI_INDEX_NAME,
	               O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (f->fd < 0 || ftruncate(f->fd, (off_t)f->file_size) != 0)
		return writer_fail(w, -errno, "%s: %s", f->ipath, strerror(errno));
	struct plan *p = &f->p;
	const struct wlayout *first = NULL; /* by fill rank: whose ones the catalog records */
	for (size_t i = 0; wlayouts[i] && rc == 0; i++) {
		const struct wlayout *l = wlayouts[i];
		uint64_t off = f->of[i] ? f->of[i]->offset : 0;
		if (f->of[i] == NULL)
			continue;
		rc = l->descriptor(f->fd, p, off);
		if (rc == 0)
			rc = write_layout(w, p, f->fd, off, l);
		if (rc == 0 && l->after)
			rc = l->after(f->fd, p, off);
		if (first == NULL || ROW(l)->fill_rank < ROW(first)->fill_rank)
			first = l;
	}
	if (rc == 0 && first && first->ones)
		first->ones(p);
	if (rc && !w->errmsg[0])
		writer_fail(w, rc, "%s: %s", f->ipath, bfi_strerror(rc));
	return rc;
}

/* The chunk and section checksums, read back from the written index, and the trailer. */
static int seal_index(struct finish *f)
{
	bfi_writer *w = f->w;
	if ((f->sums = calloc(1, (size_t)f->sumsec->size)) == NULL)
		return writer_fail(w, -ENOMEM, "out of memory for chunk checksums");
	struct bfi_chunksums_desc d = {BFI_CHUNK_LOG2, f->sumsec->offset};
	bfi_chunksums_encode(f->sums, &d);
	int rc = checksum_back(w, f->fd, f->sumsec->offset, f->sec, f->n_sec - 1,
	                       f->sums + BFI_CHUNKSUMS_DESC_SIZE);
	if (rc == 0) {
		f->sumsec->checksum = bfi_checksum64(f->sums, (size_t)f->sumsec->size);
		rc = pwrite_all(f->fd, f->sums, (size_t)f->sumsec->size, f->sumsec->offset);
	}
	if (rc == 0)
		rc = pwrite_all(f->fd, BFI_MAGIC, BFI_MAGIC_LEN, f->file_size - BFI_TRAILER_SIZE);
	return rc ? writer_fail(w, rc, "%s: %s", f->ipath, bfi_strerror(rc)) : 0;
}

/* The snapshot id, from the content; the catalog that carries it, read-only, and its digest. */
static int write_catalog(struct finish *f)
{
	bfi_writer *w = f->w;
	snapshot_id(&w->names, f->p.old_of_new, f->sums, (size_t)f->sumsec->size, f->p.k,
	            f->h.snapshot_id);
	progress(w, "catalog", 0, 0);
	int rc = 0;
	if (w->path_levels) { /* known only now: how deep the documents went */
		char lv[16];
		rc = writer_meta(w, BFI_META_PATH_LEVELS, lv, (size_t)snprintf(lv, sizeof lv, "%u", w->path_levels),
		                 "the path levels");
	}
	if (rc == 0)
		rc = catalog_write(f->cpath, &w->names, w->meta, w->n_meta, f->p.old_of_new,
		                   w->sums.distinct, w->sums.seen, f->p.ones, f->p.k, w->opt.bits ? 0.0 : w->opt.fpr,
		                   f->h.snapshot_id, w->errmsg, sizeof w->errmsg);
	if (rc)
		return rc;
	if (fchmodat(f->stage.dfd, BFI_CATALOG_NAME, 0444, 0) != 0)
		return writer_fail(w, -errno, "%s: %s", f->cpath, strerror(errno));
	rc = digest_file(f->cpath, f->h.catalog_digest, &f->h.catalog_size);
	return rc ? writer_fail(w, rc, "%s: %s", f->cpath, bfi_strerror(rc)) : 0;
}

/* The header that binds the index to its catalog; the index read-only and on disk. */
static int write_header(struct finish *f)
{
	uint8_t head[BFI_SECTION_ALIGN];
	memset(head, 0, sizeof head);
	for (uint32_t i = 0; i < f->n_sec; i++)
		bfi_section_encode(head + BFI_HEADER_SIZE + i * BFI_ENTRY_SIZE, &f->sec[i]);
	f->h.major = BFI_VERSION_MAJOR;
	/* the oldest reader that reads every feature it uses: 4 for protein keys, which 3.3 would split as DNA */
	f->h.minor = f->w->protein && f->p.minor < 4 ? 4 : f->p.minor;
	f->h.file_size = f->file_size;
	f->h.table_offset = BFI_HEADER_SIZE;
	f->h.section_count = f->n_sec;
	f->h.table_checksum = bfi_checksum64(head + BFI_HEADER_SIZE, f->n_sec * BFI_ENTRY_SIZE);
	bfi_header_encode(head, &f->h);
	int rc = pwrite_all(f->fd, head, sizeof head, 0);
	/* published files are read-only: a snapshot is replaced, never edited in place */
	if (rc == 0 && fchmod(f->fd, 0444) != 0)
		rc = -errno;
	if (rc == 0 && fsync(f->fd) != 0)
		rc = -errno;
	if (rc == 0 && close(f->fd) != 0)
		rc = -errno;
	f->fd = -1;
	return rc ? writer_fail(f->w, rc, "%s: %s", f->ipath, bfi_strerror(rc)) : 0;
}

/* The staging directory on disk, then swapped in at the path. */
static int publish(struct finish *f)
{
	bfi_writer *w = f->w;
	char warn[600];
	if (fsync(f->stage.dfd) != 0)
		return writer_fail(w, -errno, "fsync %s: %s", f->stage.dir, strerror(errno));
	int rc = staging_publish(&f->stage, f->path, w->errmsg, sizeof w->errmsg, warn, sizeof warn);
	if (rc == 0 && warn[0])
		writer_warn(w, "%s", warn);
	return rc;
}

int bfi_writer_finish(bfi_writer *w, const char *path, struct bfi_build_summary *sum)
{
	if (w == NULL || path == NULL || w->finished)
		return BFI_E_INVALID;
	int frc = sources_flush(w); /* the files still queued: read now */
	if (frc)
		return frc;
	w->finished = 1;
	static int (*const phases[])(struct finish *) = {
	    check_output, count_sets, lay_out, write_index, seal_index, write_catalog, write_header,
	    publish,
	};
	/* what bfi_writer_phase calls each */
	static const char *const phase_names[] = {"checking",  "sorting", "planning",
	                                          "filling",   "checksums", "catalog",
	                                          "publishing", "publishing"};
	struct finish *f = calloc(1, sizeof *f);
	if (f == NULL)
		return writer_fail(w, -ENOMEM, "%s", strerror(ENOMEM));
	*f = (struct finish){.w = w, .path = path, .n = w->names.n, .stage = {"", -1, -1}, .fd = -1};
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < sizeof phases / sizeof *phases; i++) {
		stats_begin(w, phase_names[i]);
		rc = phases[i](f);
	}
	stats_end(w);
	if (rc == 0 && w->spool.spilled)
		writer_warn(w, "--memory %llu MiB could not hold the keys: %llu MiB of them went through "
		            "a scratch file in %s; a larger --memory keeps them in memory",
		            (unsigned long long)(w->opt.memory >> 20),
		            (unsigned long long)((w->spool.spilled * sizeof(struct rec) + (1u << 20) - 1) >>
		                                 20),
		            w->spool.dir);
	if (rc == 0 && sum) {
		const struct plan *p = &f->p;
		uint64_t widest = 0;
		for (size_t i = 0; wlayouts[i]; i++) {
			uint64_t m = f->of[i] ? wlayouts[i]->widest(p) : 0;
			widest = m > widest ? m : widest;
		}
		*sum = (struct bfi_build_summary){.n_sets = f->n,
		                                  .keys_in = w->keys_in,
		                                  .distinct_pairs = f->pairs,
		                                  .max_set_keys = f->max_n,
		                                  .bits = widest,
		                                  .hashes = p->k,
		                                  .index_bytes = f->file_size,
		                                  .catalog_bytes = f->h.catalog_size};
		for (size_t i = 0; wlayouts[i]; i++)
			if (f->of[i] && wlayouts[i]->summary)
				wlayouts[i]->summary(p, sum);
	}
	if (f->fd >= 0)
		close(f->fd);
	staging_end(&f->stage);
	plan_free(&f->p);
	free(f->sums);
	free(f);
	return rc;
}
