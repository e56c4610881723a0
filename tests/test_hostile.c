/*
 * test_hostile.c - what an adversarial review of bfi found, through the
 * library: the stale-staging sweep removes only what bfi staged; a reader
 * learns that its files were changed in place (bfi_check_files) and where
 * a SIGBUS came from (bfi_mapped_file); FIFOs and directories in place of
 * a snapshot's files are refused without blocking; sizes that would
 * overflow are refused; the plain layout keeps to its memory budget; an
 * empty input passes no NULL to qsort. tests/hostile.sh tests the command.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

static size_t word_key(uint32_t set, uint32_t i, char *buf, size_t cap)
{
	return (size_t)snprintf(buf, cap, "w%u", (set * 7 + i) % 97);
}

static void build(const char *path, uint32_t sets)
{
	EXPECT_RC(test_build_sets(NULL, path, sets, 40, word_key), 0);
}

static int exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

/* What the user and other builds keep beside PATH survives a build at PATH. */
static void test_sweep(void)
{
	const char *t = test_tmpdir();
	char snap[4300], backup[4400], victim[4400], link[4400], p[4600];
	snprintf(snap, sizeof snap, "%s/words", t);
	build(snap, 3);
	/* a user's backup whose name looks like a staging directory with a dead pid */
	snprintf(backup, sizeof backup, "%s/words.tmp-20240101-backup", t);
	EXPECT(mkdir(backup, 0755) == 0);
	snprintf(p, sizeof p, "%s/index.bfi", backup);
	EXPECT(test_write_file(p, "mine", 4) == 0);
	/* a symlink by a staging name to another snapshot */
	snprintf(victim, sizeof victim, "%s/important.snap", t);
	build(victim, 2);
	snprintf(link, sizeof link, "%s/words.tmp-4000000-x", t);
	EXPECT(symlink(victim, link) == 0);
	/* an empty directory by a staging name: not provably bfi's */
	snprintf(p, sizeof p, "%s/words.tmp-999999-abcdef", t);
	EXPECT(mkdir(p, 0755) == 0);
	build(snap, 4);
	EXPECT(exists(backup));
	snprintf(p, sizeof p, "%s/index.bfi", backup);
	EXPECT(exists(p));
	EXPECT(exists(link));
	snprintf(p, sizeof p, "%s/index.bfi", victim);
	EXPECT(exists(p));
	snprintf(p, sizeof p, "%s/catalog.mdb", victim);
	EXPECT(exists(p));
	snprintf(p, sizeof p, "%s/words.tmp-999999-abcdef", t);
	EXPECT(exists(p));
	bfi_snapshot *s;
	EXPECT_RC(bfi_open(victim, 0, &s), 0);
	bfi_close(&s);
	/* the published files are read-only */
	struct stat st;
	snprintf(p, sizeof p, "%s/index.bfi", snap);
	EXPECT(stat(p, &st) == 0 && (st.st_mode & 0777) == 0444);
	snprintf(p, sizeof p, "%s/catalog.mdb", snap);
	EXPECT(stat(p, &st) == 0 && (st.st_mode & 0777) == 0444);
}

/* A live build's staging directory (its marker locked) is not swept; a dead one's is. */
static void test_sweep_lock(void)
{
	const char *t = test_tmpdir();
	char snap[4300];
	snprintf(snap, sizeof snap, "%s/lk", t);
	build(snap, 2);
	/* a staging directory as bfi makes it (spec/format.md, "Publishing"): its marker,
	 * naming the directory, locked as a live build holds it */
	char dir[4400], mark[4500];
	snprintf(dir, sizeof dir, "%s/lk.tmp-Live01", t);
	EXPECT(mkdir(dir, 0755) == 0);
	snprintf(mark, sizeof mark, "%s/.bfi-staging", dir);
	static const char text[] = "bfi staging directory: a build in progress, or what a killed one left\n"
	                           "lk.tmp-Live01\n";
	EXPECT(test_write_file(mark, text, sizeof text - 1) == 0);
	char idx[4500];
	snprintf(idx, sizeof idx, "%s/index.bfi", dir);
	EXPECT(test_write_file(idx, "partial", 7) == 0);
	int fd = open(mark, O_RDONLY);
	EXPECT(fd >= 0 && flock(fd, LOCK_EX) == 0);
	build(snap, 3);
	EXPECT(exists(idx)); /* locked: a build in progress, kept */
	close(fd);           /* the lock dies with its holder */
	build(snap, 4);
	EXPECT(!exists(dir)); /* abandoned: swept */
}

/* A snapshot holding a file bfi did not write is not replaced. */
static void test_foreign_file(void)
{
	const char *t = test_tmpdir();
	char snap[4300], p[4400], err[600];
	snprintf(snap, sizeof snap, "%s/own", t);
	build(snap, 2);
	snprintf(p, sizeof p, "%s/NOTES.txt", snap);
	EXPECT(test_write_file(p, "keep me", 7) == 0);
	EXPECT_RC(bfi_output_check(snap, err, sizeof err), BFI_E_EXISTS);
	EXPECT(strstr(err, "NOTES.txt") != NULL);
	EXPECT(test_build_sets(NULL, snap, 3, 10, word_key) == BFI_E_EXISTS);
	EXPECT(exists(p));
	EXPECT_RC(bfi_output_check("", err, sizeof err), BFI_E_INVALID);
	snprintf(p, sizeof p, "%s/no/such/dir/x", t);
	EXPECT(bfi_output_check(p, err, sizeof err) == -ENOENT);
}

static sigjmp_buf jump;
static const bfi_snapshot *faulted_snap;
static const char *volatile faulted_file;

static void on_bus(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	faulted_file = bfi_mapped_file(faulted_snap, si->si_addr);
	siglongjmp(jump, 1);
}

/*
 * Run touch(ctx), which must fault on a map of s, as bfi.h tells a host to:
 * a SIGBUS handler asks bfi_mapped_file and jumps out. Returns the file
 * the fault was placed in, or NULL.
 */
static const char *fault_in(const bfi_snapshot *s, void (*touch)(void *), void *ctx)
{
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_bus;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGBUS, &sa, &old);
	faulted_snap = s;
	faulted_file = NULL;
	if (sigsetjmp(jump, 1) == 0) {
		touch(ctx);
		EXPECT(0 && "the touch faults before it returns");
	}
	sigaction(SIGBUS, &old, NULL);
	return faulted_file;
}

struct query_ctx {
	const bfi_snapshot *s;
	bfi_result *r;
};

static void touch_query(void *ctx)
{
	struct query_ctx *q = ctx;
	int rc = bfi_query_key(q->s, "w5", 2, q->r);
	EXPECT(rc == 1); /* not reached */
}

static void touch_byte(void *ctx)
{
	volatile char c = *(const char *)ctx;
	(void)c;
}

/* A file shrunk or overwritten under an open snapshot. */
static void test_changed(void)
{
	const char *t = test_tmpdir();
	char snap[4300], other[4300], idx[4400], oidx[4400];
	snprintf(snap, sizeof snap, "%s/live", t);
	snprintf(other, sizeof other, "%s/other", t);
	/* many sets, so that a query reads pages past the first */
	build(snap, 3000);
	build(other, 3000);
	snprintf(idx, sizeof idx, "%s/index.bfi", snap);
	snprintf(oidx, sizeof oidx, "%s/index.bfi", other);
	bfi_snapshot *s;
	bfi_result *r;
	EXPECT_RC(bfi_open(snap, 0, &s), 0);
	EXPECT_RC(bfi_result_create(&r), 0);
	if (!s || !r)
		return;
	EXPECT_RC(bfi_check_files(s), 0);
	EXPECT_RC(bfi_query_key(s, "w5", 2, r), 0);
	EXPECT(bfi_mapped_file(s, (const char *)&s) == NULL);
	/* the same size, other bytes (another snapshot's index): seen at once */
	size_t len;
	uint8_t *bytes = test_read_file(oidx, &len), *mine = test_read_file(idx, &len);
	EXPECT(bytes && mine);
	chmod(idx, 0644);
	int fd = open(idx, O_WRONLY);
	EXPECT(fd >= 0 && pwrite(fd, bytes, len, 0) == (ssize_t)len);
	EXPECT_RC(bfi_check_files(s), BFI_E_CHANGED);
	/* back as it was, byte for byte: the header matches again, the time does not */
	EXPECT(pwrite(fd, mine, len, 0) == (ssize_t)len);
	EXPECT_RC(bfi_check_files(s), BFI_E_CHANGED);
	/* shrunk: a query faults, and the fault is the index's */
	EXPECT(ftruncate(fd, 0) == 0);
	close(fd);
	free(bytes);
	free(mine);
	EXPECT_RC(bfi_check_files(s), BFI_E_CHANGED);
	struct query_ctx q = {s, r};
	const char *f = fault_in(s, touch_query, &q);
	EXPECT(f != NULL && strcmp(f, "index.bfi") == 0);
	bfi_result_destroy(&r);
	bfi_close(&s);
	/* and verify, opening afresh, refuses what is left */
	struct bfi_verify_report rep;
	EXPECT(bfi_verify(snap, &rep, NULL, NULL) != 0);
}

/* The catalog truncated under an open snapshot: its fault is named too. */
static void test_catalog_shrunk(void)
{
	const char *t = test_tmpdir();
	char snap[4300], cat[4400];
	snprintf(snap, sizeof snap, "%s/cat", t);
	build(snap, 50);
	snprintf(cat, sizeof cat, "%s/catalog.mdb", snap);
	bfi_snapshot *s;
	EXPECT_RC(bfi_open(snap, 0, &s), 0);
	if (!s)
		return;
	const char *name;
	size_t nl;
	EXPECT_RC(bfi_set_name(s, 7, &name, &nl), 0); /* a pointer into LMDB's map */
	chmod(cat, 0644); /* read-only as published: only a user who means to can */
	EXPECT(truncate(cat, 0) == 0);
	EXPECT_RC(bfi_check_files(s), BFI_E_CHANGED);
	const char *f = fault_in(s, touch_byte, (void *)name);
	EXPECT(f != NULL && strcmp(f, "catalog.mdb") == 0);
	bfi_close(&s);
}

/* A FIFO or a directory where a snapshot's file belongs: refused, at once. */
static void test_not_regular(void)
{
	const char *t = test_tmpdir();
	static const char *const files[2] = {"index.bfi", "catalog.mdb"};
	alarm(20); /* a hang fails the test instead of stalling the suite */
	for (int f = 0; f < 2; f++)
		for (int kind = 0; kind < 2; kind++) {
			char snap[4300], p[4400];
			snprintf(snap, sizeof snap, "%s/nr%d%d", t, f, kind);
			build(snap, 2);
			snprintf(p, sizeof p, "%s/%s", snap, files[f]);
			chmod(p, 0644);
			EXPECT(unlink(p) == 0);
			EXPECT(kind ? mkdir(p, 0755) == 0 : mkfifo(p, 0644) == 0);
			bfi_snapshot *s = NULL;
			EXPECT_RC(bfi_open(snap, 0, &s), BFI_E_NOT_REGULAR);
			struct bfi_verify_report rep;
			EXPECT_RC(bfi_verify(snap, &rep, NULL, NULL), BFI_E_NOT_REGULAR);
			bfi_filter *flt;
			EXPECT_RC(bfi_filter_load(p, &flt), BFI_E_NOT_REGULAR);
		}
	alarm(0);
}

/* Sizes whose doubles would not fit an integer are refused, not wrapped. */
static void test_sizes(void)
{
	struct bfi_build_options o;
	bfi_writer *w = NULL;
	bfi_build_options_init(&o);
	o.expected_keys = 1ull << 62;
	EXPECT(bfi_writer_create(&o, &w) != 0 && w == NULL);
	o.expected_keys = 1ull << 40; /* within the option's range, but m = 9.6 x 2^40 is not */
	EXPECT(bfi_writer_create(&o, &w) != 0 && w == NULL);
	uint64_t m;
	uint32_t k;
	EXPECT_RC(bfi_filter_size(1ull << 62, 0.01, &m, &k), BFI_E_LIMIT);
	EXPECT_RC(bfi_filter_size(10000, 0.01, &m, &k), 0);
	EXPECT(k == 7 && m == 95930); /* the rate at k = 7 is 0.01 exactly, not 2^-7 */
	EXPECT_RC(bfi_filter_size(10, 1e-300, &m, &k), 1); /* k capped at 32: said */
	EXPECT(k == 32);
	EXPECT_RC(bfi_filter_size(10, 0, &m, &k), BFI_E_INVALID);
	/* --bits with one key: k from m / n ln 2 would be 7.6e11, capped, not wrapped */
	bfi_build_options_init(&o);
	o.bits = 1ull << 40;
	o.layouts = BFI_BUILD_PLAIN;
	o.memory = 16u << 20;
	EXPECT_RC(bfi_writer_create(&o, &w), 0);
	bfi_writer_destroy(&w);
	/* a clamp is a warning, not silence */
	bfi_build_options_init(&o);
	o.fpr = 1e-300;
	o.memory = 1;
	EXPECT_RC(bfi_writer_create(&o, &w), 0);
	const char *warn = bfi_writer_warnings(w);
	EXPECT(strstr(warn, "2^-32") != NULL && strstr(warn, "4 MiB") != NULL);
	bfi_writer_destroy(&w);
	/* contradictions */
	bfi_build_options_init(&o);
	o.keep_order = o.cluster = 1;
	EXPECT_RC(bfi_writer_create(&o, &w), BFI_E_INVALID);
	bfi_build_options_init(&o);
	o.route_shards = 2;
	EXPECT_RC(bfi_writer_create(&o, &w), BFI_E_INVALID); /* routing without rambo */
	bfi_build_options_init(&o);
	o.layouts = BFI_BUILD_RAMBO;
	o.cells = 1;
	EXPECT_RC(bfi_writer_create(&o, &w), BFI_E_INVALID);
	o.cells = 10;
	o.shards = 4;
	EXPECT_RC(bfi_writer_create(&o, &w), BFI_E_INVALID);
}

/*
 * The plain layout within --memory: one set's filter of 63 MB goes out in
 * stripes of the 8 MiB half-budget. Measured in a child that runs the bfi
 * command, whose peak RSS wait4 reports.
 */
static void test_plain_memory(void)
{
	if (access("./bfi", X_OK) != 0) {
		EXPECT(0 && "./bfi not built");
		return;
	}
	const char *t = test_tmpdir();
	char tsv[4300], snap[4300];
	snprintf(tsv, sizeof tsv, "%s/two.tsv", t);
	snprintf(snap, sizeof snap, "%s/plain", t);
	EXPECT(test_write_file(tsv, "a\tx\nb\ty\n", 8) == 0);
	pid_t pid = fork();
	if (pid == 0) {
		/* ASan keeps freed blocks resident in its quarantine: count bfi's memory, not that */
		const char *was = getenv("ASAN_OPTIONS");
		char opts[1024];
		snprintf(opts, sizeof opts, "%s%squarantine_size_mb=0", was ? was : "", was && *was ? ":" : "");
		setenv("ASAN_OPTIONS", opts, 1);
		execl("./bfi", "bfi", "build", "-q", "-o", snap, "--layout", "plain", "--memory", "16M",
		      "--expected-keys", "50000000", "--tsv", tsv, (char *)NULL);
		_exit(127);
	}
	int status;
	struct rusage ru;
	EXPECT(wait4(pid, &status, 0, &ru) == pid);
	EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	long filter_kb = 50000000l * 7 / 693 * 1000 / 8 / 1024; /* m / 8 bytes, in KiB */
	printf("plain: filters of %ld KiB each at --memory 16M: peak RSS %ld KiB\n", filter_kb,
	       ru.ru_maxrss);
	EXPECT(ru.ru_maxrss < filter_kb);
	bfi_snapshot *s;
	EXPECT_RC(bfi_open(snap, 0, &s), 0);
	bfi_result *r;
	EXPECT_RC(bfi_result_create(&r), 0);
	if (s && r) {
		EXPECT_RC(bfi_query_key(s, "y", 1, r), 0);
		EXPECT(bfi_result_count(r) >= 1);
	}
	bfi_result_destroy(&r);
	bfi_close(&s);
	test_rm_rf(snap);
}

/* An empty directory of sets, and an empty stop-word list: no NULL to qsort. */
static void test_empty_inputs(void)
{
	const char *t = test_tmpdir();
	char dir[4300], stops[4300], docs[4300], doc[4400], snap[4300];
	snprintf(dir, sizeof dir, "%s/empty", t);
	EXPECT(mkdir(dir, 0755) == 0);
	bfi_writer *w;
	EXPECT_RC(bfi_writer_create(NULL, &w), 0);
	EXPECT_RC(bfi_writer_add_dir(w, dir), 0);
	snprintf(snap, sizeof snap, "%s/e", t);
	EXPECT_RC(bfi_writer_finish(w, snap, NULL), BFI_E_NO_SETS);
	bfi_writer_destroy(&w);
	snprintf(stops, sizeof stops, "%s/stops", t);
	EXPECT(test_write_file(stops, "", 0) == 0);
	snprintf(docs, sizeof docs, "%s/docs", t);
	EXPECT(mkdir(docs, 0755) == 0);
	snprintf(doc, sizeof doc, "%s/d1", docs);
	EXPECT(test_write_file(doc, "some words\n", 11) == 0);
	EXPECT_RC(bfi_writer_create(NULL, &w), 0);
	EXPECT_RC(bfi_writer_add_text(w, docs, 0, stops), 0);
	EXPECT_RC(bfi_writer_finish(w, snap, NULL), 0);
	bfi_writer_destroy(&w);
}

/* How the keys were made is recorded, and inputs made two ways are refused. */
static void test_key_rules(void)
{
	const char *t = test_tmpdir();
	char fa[4300], keys[4300], snap[4300];
	snprintf(fa, sizeof fa, "%s/g.fa", t);
	EXPECT(test_write_file(fa, ">r\nACGTACGTTT\n", 14) == 0);
	snprintf(keys, sizeof keys, "%s/keys", t);
	EXPECT(mkdir(keys, 0755) == 0);
	char k1[4400];
	snprintf(k1, sizeof k1, "%s/k1", keys);
	EXPECT(test_write_file(k1, "a\n", 2) == 0);
	snprintf(snap, sizeof snap, "%s/fa", t);
	bfi_writer *w;
	EXPECT_RC(bfi_writer_create(NULL, &w), 0);
	EXPECT_RC(bfi_writer_add_fasta(w, fa, 5, 0), 0);
	EXPECT_RC(bfi_writer_add_dir(w, keys), BFI_E_INPUT);
	EXPECT_RC(bfi_writer_finish(w, snap, NULL), 0);
	bfi_writer_destroy(&w);
	bfi_snapshot *s;
	EXPECT_RC(bfi_open(snap, 0, &s), 0);
	const void *v;
	size_t vl;
	EXPECT_RC(bfi_catalog_meta(s, "input", &v, &vl), 0);
	EXPECT(vl == 5 && memcmp(v, "fasta", 5) == 0);
	EXPECT_RC(bfi_catalog_meta(s, "kmer", &v, &vl), 0);
	EXPECT(vl == 1 && memcmp(v, "5", 1) == 0);
	bfi_close(&s);
	EXPECT_RC(bfi_writer_create(NULL, &w), 0);
	EXPECT_RC(bfi_writer_add_dir(w, keys), 0);
	EXPECT_RC(bfi_writer_add_fasta(w, fa, 5, 0), BFI_E_INPUT);
	bfi_writer_destroy(&w);
}

int main(void)
{
	/* first, while this process is small: a forked child's peak RSS counts the parent's pages until exec */
	test_run("hostile: the plain layout keeps to --memory", test_plain_memory);
	test_run("hostile: the sweep keeps a backup, a symlinked snapshot and unmarked directories",
	         test_sweep);
	test_run("hostile: a locked staging directory is kept, an abandoned one swept",
	         test_sweep_lock);
	test_run("hostile: a snapshot holding another file is not replaced", test_foreign_file);
	test_run("hostile: changes in place are seen; a SIGBUS is placed in index.bfi", test_changed);
	test_run("hostile: a shrunk catalog's SIGBUS is placed in catalog.mdb", test_catalog_shrunk);
	test_run("hostile: FIFOs and directories as snapshot files are refused without blocking",
	         test_not_regular);
	test_run("hostile: sizes past the limits are refused; clamps warn", test_sizes);
	test_run("hostile: empty inputs pass no NULL to qsort", test_empty_inputs);
	test_run("hostile: the key rules are recorded; mixed inputs refused", test_key_rules);
	test_cleanup();
	return test_exit();
}
