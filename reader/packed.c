/*
 * packed.c - a pack (spec/format.md, "Packs") opened as the snapshot or
 * collection it holds, without unpacking it to disk: its frames read and
 * checked in turn, each snapshot's catalog and index copied into memory
 * (memfd: anonymous pages, which the kernel may swap, never files), and
 * opened from those descriptors as from a directory's files. The index
 * is then as fast to query as a mapped one, at the cost of memory for all
 * of it; an index larger than memory is unpacked first.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bfi_manifest.h"
#include "bfi_pack.h"
#include "internal.h"

#define COPY_BUF (1u << 20)

int bfi__is_pack(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int pack_bad(struct bfi_bad *bad, int rc, const struct bfi_pack_error *e)
{
	bad->what = e->what ? e->what : "the pack cannot be read";
	bad->offset = e->offset;
	bad->length = 0;
	return rc;
}

/* The current member m, copied into a new memfd: its descriptor in *fd. */
static int to_memory(struct bfi_pack_in *p, const struct bfi_pack_member *m, uint8_t *buf, int *fd,
                     struct bfi_bad *bad)
{
	*fd = memfd_create(m->file, MFD_CLOEXEC);
	if (*fd < 0)
		return bfi__bad(bad, -errno, 0, 0, "memfd_create");
	struct bfi_pack_error e;
	int rc = bfi_pack_in_copy(p, *fd, buf, COPY_BUF, NULL, NULL, &e);
	return rc ? pack_bad(bad, rc, &e) : 0;
}

/* The next member, which must be there. */
static int next(struct bfi_pack_in *p, struct bfi_pack_member *m, struct bfi_bad *bad)
{
	struct bfi_pack_error e;
	int rc = bfi_pack_in_next(p, m, &e);
	if (rc == 1)
		return bfi__bad(bad, BFI_E_PACK, 0, 0, "the pack ends early");
	return rc ? pack_bad(bad, rc, &e) : 0;
}

/* The snapshot whose catalog.mdb is the current member m: both files read, then opened. */
static int open_one(struct bfi_pack_in *p, struct bfi_pack_member *m, unsigned flags,
                    uint8_t *buf, bfi_snapshot **out, struct bfi_bad *bad)
{
	int cat = -1, idx = -1;
	int rc = to_memory(p, m, buf, &cat, bad);
	if (rc == 0)
		rc = next(p, m, bad);
	if (rc == 0)
		rc = to_memory(p, m, buf, &idx, bad);
	if (rc) {
		if (cat >= 0)
			close(cat);
		if (idx >= 0)
			close(idx);
		return rc;
	}
	return bfi__open_fds(idx, cat, flags, out, bad);
}

int bfi__open_pack(const char *path, unsigned flags, struct bfi_packed *pk, struct bfi_bad *bad,
                   int (*each)(void *ctx, const char *segment, bfi_snapshot *s), void *ctx)
{
	memset(pk, 0, sizeof *pk);
	bfi_snapshot **out = &pk->snap;
	bad->what = NULL;
	bad->offset = bad->length = 0;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return bfi__bad(bad, -errno, 0, 0, "cannot open the pack");
	struct bfi_pack_in *p = NULL;
	struct bfi_pack_error e;
	int rc = bfi_pack_in_open(fd, &p, &e);
	uint8_t *buf = rc == 0 ? malloc(COPY_BUF) : NULL;
	struct bfi_pack_member m;
	struct bfi_manifest man;
	bfi_snapshot **segs = NULL;
	uint32_t n_segs = 0;
	if (rc) {
		pack_bad(bad, rc, &e);
		goto out;
	}
	if (buf == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	rc = next(p, &m, bad);
	if (rc)
		goto out;
	if (!bfi_pack_in_is_collection(p)) {
		rc = open_one(p, &m, flags, buf, out, bad);
		if (rc == 0 && each)
			rc = each(ctx, "", *out);
	} else {
		const struct bfi_manifest *pm = bfi_pack_in_manifest(p);
		segs = calloc(pm->n_segments ? pm->n_segments : 1, sizeof *segs);
		if (segs == NULL) {
			rc = -ENOMEM;
			goto out;
		}
		for (; n_segs < pm->n_segments; n_segs++) {
			if ((rc = next(p, &m, bad)) != 0 || (rc = next(p, &m, bad)) != 0 ||
			    (rc = open_one(p, &m, flags, buf, &segs[n_segs], bad)) != 0)
				goto out;
			if (each && (rc = each(ctx, pm->segs[n_segs].name, segs[n_segs])) != 0) {
				n_segs++;
				goto out;
			}
		}
	}
	if (rc)
		goto out;
	rc = bfi_pack_in_next(p, &m, &e); /* the end: nothing after, the tail zero */
	if (rc != 1) {
		rc = rc ? pack_bad(bad, rc, &e) : bfi__bad(bad, BFI_E_PACK, 0, 0, "a member too many");
		goto out;
	}
	rc = 0;
	if (segs) {
		/* the manifest is copied: the pack reader owns its own */
		const struct bfi_manifest *pm = bfi_pack_in_manifest(p);
		man = *pm;
		man.segs = malloc((pm->n_segments ? pm->n_segments : 1) * sizeof *man.segs);
		man.removed = malloc((pm->n_removed ? pm->n_removed : 1) * sizeof *man.removed);
		if (man.segs == NULL || man.removed == NULL) {
			free(man.segs);
			free(man.removed);
			rc = -ENOMEM;
			goto out;
		}
		memcpy(man.segs, pm->segs, pm->n_segments * sizeof *man.segs);
		memcpy(man.removed, pm->removed, pm->n_removed * sizeof *man.removed);
		pk->m = man; /* the caller makes the collection of them (bfi__collection_of) */
		pk->segs = segs;
		pk->collection = 1;
		segs = NULL;
		n_segs = 0;
	}
out:
	for (uint32_t i = 0; i < n_segs; i++)
		bfi_close(&segs[i]);
	free(segs);
	if (rc)
		bfi_close(out);
	free(buf);
	bfi_pack_in_close(&p);
	close(fd);
	return rc;
}
