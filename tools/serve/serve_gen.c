/*
 * serve_gen.c - the generations bfi serve answers from. A slot (a name and
 * its path) holds its current generation; a request takes a reference
 * under the slot's lock and drops it when it ends, and a swap replaces the
 * current one under the same lock and drops the slot's own reference. So
 * a request in flight ends on the generation it began on, and the last
 * reference closes it (its files are unmapped then, not before).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "bfi_catalog.h"
#include "inspect.h"
#include "serve.h"
#include "tools.h"

struct gen *gen_acquire(struct slot *sl)
{
	pthread_mutex_lock(&sl->mu);
	struct gen *g = sl->cur;
	if (g)
		atomic_fetch_add_explicit(&g->refs, 1, memory_order_relaxed);
	pthread_mutex_unlock(&sl->mu);
	return g;
}

static void gen_free(struct server *sv, struct gen *g)
{
	atomic_fetch_sub(&sv->m.mapped, (long long)g->mapped);
	bfi_close(&g->snap);
	free(g->names.at);
	free(g->names.json);
	free(g->names.json_at);
	free(g->inspect);
	free(g);
}

void gen_release(struct server *sv, struct gen *g)
{
	/* acq_rel: the closing thread sees every other holder's reads done */
	if (g && atomic_fetch_sub_explicit(&g->refs, 1, memory_order_acq_rel) == 1)
		gen_free(sv, g);
}

/*
 * Every name as an answer prints it, `, "name"`, in one block: an answer
 * is then one copy a set, and the names are read from the block rather
 * than from the catalog's pages. Left out (NULL) past 4 GiB.
 */
static int load_json_names(struct names *c)
{
	char piece[8];
	uint64_t total = 0;
	for (uint64_t o = 0; o < c->n; o++) {
		if (c->at[o].p == NULL)
			continue;
		total += 4;
		for (size_t i = 0; i < c->at[o].len;)
			total += json_piece(c->at[o].p, c->at[o].len, &i, piece);
	}
	if (total > UINT32_MAX - JSON_SLACK)
		return 0;
	c->json = malloc(total + JSON_SLACK);
	c->json_at = malloc((c->n + 1) * sizeof *c->json_at);
	if (c->json == NULL || c->json_at == NULL) {
		free(c->json);
		free(c->json_at);
		c->json = NULL;
		c->json_at = NULL;
		return -ENOMEM;
	}
	uint32_t at = 0;
	for (uint64_t o = 0; o < c->n; o++) {
		c->json_at[o] = at;
		const char *p = c->at[o].p;
		size_t len = c->at[o].len;
		if (p == NULL)
			continue; /* empty: a removed set's hole */
		memcpy(c->json + at, ", \"", 3);
		at += 3;
		for (size_t i = 0; i < len;) {
			size_t n = json_piece(p, len, &i, piece);
			memcpy(c->json + at, piece, n);
			at += (uint32_t)n;
		}
		c->json[at++] = '"';
		if (at - c->json_at[o] > c->json_max)
			c->json_max = at - c->json_at[o];
	}
	c->json_at[c->n] = at;
	memset(c->json + at, 0, JSON_SLACK);
	return 0;
}

/* Every set's name, looked up now: requests only read them. */
static int load_names(struct gen *g, const struct bfi_info *in)
{
	g->names.n = in->ordinals;
	if (in->ordinals > NAMES_CACHED)
		return 0; /* too many to keep: each request looks its names up */
	g->names.at = calloc(in->ordinals ? in->ordinals : 1, sizeof *g->names.at);
	if (g->names.at == NULL)
		return -ENOMEM;
	for (uint64_t o = 0; o < in->ordinals; o++) {
		const char *name;
		size_t len;
		int rc = bfi_set_name(g->snap, (uint32_t)o, &name, &len);
		if (rc == BFI_E_NOT_FOUND && in->segments)
			continue; /* a removed set's hole */
		if (rc)
			return rc;
		g->names.at[o] = (struct name_ref){name, len};
	}
	return load_json_names(&g->names);
}

/* bfi inspect --json of the new generation, less the path (the server's business), for GET /v1/NAME. */
static int load_inspect(struct gen *g)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (f == NULL)
		return -errno;
	int rc = inspect_write(f, g->snap, NULL, 1);
	if (fclose(f) != 0 && rc == 0)
		rc = -ENOMEM;
	if (rc) {
		free(buf);
		return rc > 0 ? -ENOMEM : rc;
	}
	while (len && buf[len - 1] == '\n')
		len--;
	g->inspect = buf;
	g->inspect_len = len;
	return 0;
}

/*
 * A snapshot larger than the memory this process may hold is served
 * from its mapping all the same: each request reads the pages its keys
 * need, a few a key, and the page cache keeps those asked for most
 * (a scan reads the whole index a batch, which a request of a few keys
 * never pays back). So it is not warmed (--warm would read in what
 * cannot stay), and note says so. A pack, which is read into memory
 * whole to be served, is refused where its index does not fit, with why.
 */
static int fits(struct server *sv, struct slot *sl, int *warm, char *note, size_t cap)
{
	struct bfi_memory_limits lim;
	bfi_memory_limits(&lim);
	uint64_t room = lim.query;
	struct stat st;
	*warm = sv->warm;
	if (stat(sl->path, &st) != 0)
		return 0; /* bfi_open says why */
	uint64_t size = 0;
	if (S_ISREG(st.st_mode)) { /* a pack: its index's size, from its tables alone */
		bfi_snapshot *p = NULL;
		if (bfi_open(sl->path, BFI_OPEN_SCAN | BFI_OPEN_NO_CATALOG, &p) != 0)
			return 0;
		struct bfi_info in;
		bfi_info(p, &in);
		bfi_close(&p);
		if (in.file_size > room) {
			snprintf(note, cap, "a pack is read into memory whole to be served, and its index "
			         "(%llu MiB) passes the %llu MiB this process may hold (three quarters of "
			         "the %s): unpack it (bfi unpack) and serve the snapshot, which is mapped",
			         (unsigned long long)(in.file_size >> 20), (unsigned long long)(room >> 20),
			         bfi_memory_bound_name(lim.bound));
			return BFI_E_LIMIT;
		}
		return 0;
	}
	char path[4200];
	snprintf(path, sizeof path, "%s/index.bfi", sl->path);
	if (stat(path, &st) == 0)
		size = (uint64_t)st.st_size;
	if (size > room) {
		*warm = 0;
		snprintf(note, cap, "its index (%llu MiB) passes the %llu MiB this process may hold "
		         "(three quarters of the %s): served from its mapping, %sits pages read as "
		         "requests need them", (unsigned long long)(size >> 20),
		         (unsigned long long)(room >> 20), bfi_memory_bound_name(lim.bound),
		         sv->warm ? "not warmed, " : "");
	}
	return 0;
}

static struct gen *gen_open(struct server *sv, struct slot *sl, int *rc, char *note, size_t cap)
{
	int warm;
	note[0] = 0;
	if ((*rc = fits(sv, sl, &warm, note, cap)) != 0)
		return NULL;
	struct gen *g = calloc(1, sizeof *g);
	if (g == NULL) {
		*rc = -ENOMEM;
		return NULL;
	}
	*rc = bfi_open(sl->path, warm ? BFI_OPEN_WARM : 0, &g->snap);
	struct bfi_info in;
	if (*rc == 0) {
		bfi_info(g->snap, &in);
		*rc = load_names(g, &in);
	}
	if (*rc == 0)
		*rc = load_inspect(g);
	if (*rc) {
		gen_free(sv, g); /* nothing counted as mapped yet */
		return NULL;
	}
	memcpy(g->id, in.snapshot_id, sizeof g->id);
	g->generation = in.segments ? in.generation : 0; /* a snapshot's: set when swapped in */
	g->mapped = in.file_size + in.catalog_size;
	g->kmer = meta_uint(g->snap, BFI_META_KMER, 0);
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	g->opened = (double)now.tv_sec + (double)now.tv_nsec / 1e9;
	atomic_init(&g->refs, 1); /* the slot's */
	atomic_fetch_add(&sv->m.mapped, (long long)g->mapped);
	return g;
}

int gen_changed(struct slot *sl, struct gen *g)
{
	if (atomic_load(&g->dead))
		return 1;
	if (bfi_check_files(g->snap) == 0)
		return 0;
	gen_kill(sl, g);
	return 1;
}

int gen_changed_since(struct slot *sl, struct gen *g, long long now_ns)
{
	if (atomic_load(&g->dead))
		return 1;
	if (now_ns - atomic_load_explicit(&g->checked, memory_order_relaxed) < CHECK_EVERY)
		return 0;
	if (gen_changed(sl, g))
		return 1;
	atomic_store_explicit(&g->checked, now_ns, memory_order_relaxed);
	return 0;
}

void gen_kill(struct slot *sl, struct gen *g)
{
	if (atomic_exchange(&g->dead, 1) == 0) {
		atomic_fetch_add(&sl->changed, 1);
		atomic_store(&sl->dirty, 1); /* once: a new generation is looked for at the path */
	}
}

int slot_reload(struct server *sv, struct slot *sl, char *why, size_t cap, char *note,
                size_t note_cap)
{
	int rc;
	struct gen *g;
	/* a file cut short while it is opened faults: the open fails, and what it made is lost */
	sigjmp_buf env;
	if (sigsetjmp(env, 0) == 0) { /* the mask need not be saved: serve_guard.c */
		serve_guard_enter(&env, NULL);
		g = gen_open(sv, sl, &rc, note, note_cap);
		serve_guard_leave();
	} else {
		serve_guard_leave();
		g = NULL;
		rc = BFI_E_CHANGED;
	}
	if (g == NULL) {
		atomic_fetch_add(&sl->reload_failures, 1);
		/* what goes on serving: the generation before, unless its own files changed too */
		struct gen *old = gen_acquire(sl);
		int dead = old && gen_changed(sl, old);
		gen_release(sv, old);
		snprintf(why, cap, "%s; %s", rc == BFI_E_LIMIT && note[0] ? note : bfi_strerror(rc),
		         old == NULL ? "nothing is served under this name yet"
		         : dead ? "the generation before was changed in place too: its requests get 503 "
		                  "until a whole snapshot is published there"
		                : "the generation before goes on serving");
		return rc;
	}
	pthread_mutex_lock(&sl->mu);
	struct gen *old = sl->cur;
	/* the same snapshot again (a dead one is replaced by its own republished twin) */
	int same = old && !atomic_load(&old->dead) && !memcmp(old->id, g->id, sizeof g->id) &&
	           (g->generation == 0 || g->generation == old->generation);
	if (!same) {
		sl->opens++;
		if (g->generation == 0)
			g->generation = sl->opens;
		sl->cur = g;
	}
	pthread_mutex_unlock(&sl->mu);
	gen_release(sv, same ? g : old); /* the new one unused, or the old one's slot reference */
	return !same;
}

void slots_close(struct server *sv)
{
	for (size_t i = 0; i < sv->n_slots; i++) {
		struct slot *sl = &sv->slots[i];
		pthread_mutex_lock(&sl->mu);
		struct gen *g = sl->cur;
		sl->cur = NULL;
		pthread_mutex_unlock(&sl->mu);
		gen_release(sv, g);
	}
}
