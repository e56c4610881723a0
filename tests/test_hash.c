/* test_hash.c - the key hash against the test vectors printed in spec/format.md. */
#include <stdarg.h>
#include <string.h>

#include "bfi.h"
#include "format.h"
#include "test.h"

/* The rows of one vector table in the spec: from its marker to the end marker. */
struct vrows {
	const char *at, *end;
	const char *key, *rest; /* of the current row: its key and what follows it */
	size_t klen;
};

/* Find the table whose marker is printf(fmt, ...); 0 if it is missing. */
__attribute__((format(printf, 3, 4))) static int vrows_open(struct vrows *v, const char *spec,
                                                            const char *fmt, ...)
{
	char marker[96];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(marker, sizeof marker, fmt, ap);
	va_end(ap);
	v->at = strstr(spec, marker);
	EXPECT(v->at != NULL);
	v->end = v->at ? strstr(v->at, "<!-- end vectors -->") : NULL;
	EXPECT(v->end != NULL);
	return v->at && v->end;
}

/* Move to the next row "| `key` | rest"; 0 after the last. */
static int vrows_next(struct vrows *v)
{
	for (const char *line = v->at; line && line < v->end;) {
		const char *nl = strchr(line, '\n');
		v->at = nl ? nl + 1 : NULL;
		if (strncmp(line, "| `", 3) == 0) {
			const char *q = strstr(line + 3, "` |");
			EXPECT(q != NULL);
			if (q == NULL)
				return 0;
			v->key = line + 3;
			v->klen = (size_t)(q - v->key);
			v->rest = q + 3;
			return 1;
		}
		line = v->at;
	}
	return 0;
}

/*
 * Check every vector row between the marker for (m, k) and the end marker.
 * Returns the number of rows checked.
 */
static int check_table(const char *spec, uint64_t m, uint32_t k, int with_hash)
{
	struct vrows v;
	int rows = 0;
	int ok = vrows_open(&v, spec, "<!-- vectors m=%llu k=%u -->", (unsigned long long)m, k);
	for (; ok && vrows_next(&v); rows++) {
		bfi_keyhash h = bfi_hash_key(v.key, v.klen);
		const char *rest = v.rest;
		if (with_hash) {
			unsigned long long len, h1, h2;
			int used = 0;
			EXPECT(sscanf(rest, " %llu | %llx | %llx |%n", &len, &h1, &h2, &used) == 3);
			EXPECT(len == v.klen);
			EXPECT(h.h1 == h1 && h.h2 == h2);
			rest += used;
		}
		uint64_t pos[BFI_MAX_K];
		EXPECT_RC(bfi_key_positions(v.key, v.klen, m, k, pos), 0);
		for (uint32_t i = 0; i < k; i++) {
			unsigned long long want;
			int used = 0;
			EXPECT(sscanf(rest, " %llu%n", &want, &used) == 1);
			EXPECT(pos[i] == want);
			EXPECT(pos[i] == bfi_hash_pos(h, i, m));
			rest += used;
		}
	}
	return rows;
}

/* The line pre-filter table: each key's line and its k bits within it. */
static int check_lines(const char *spec, uint64_t pre_m, uint32_t k)
{
	struct vrows v;
	int rows = 0;
	int ok = vrows_open(&v, spec, "<!-- line vectors pre_m=%llu k=%u -->",
	                    (unsigned long long)pre_m, k);
	for (; ok && vrows_next(&v); rows++) {
		bfi_keyhash h = bfi_hash_key(v.key, v.klen);
		const char *rest = v.rest;
		unsigned long long want_line;
		int used = 0;
		EXPECT(sscanf(rest, " %llu |%n", &want_line, &used) == 1);
		rest += used;
		uint64_t first = bfi_pre_line(bfi_hash_probe(h, 0), pre_m);
		EXPECT(first % 512 == 0 && first < pre_m && first / 512 == want_line);
		for (uint32_t i = 0; i < k; i++) {
			unsigned want;
			EXPECT(sscanf(rest, " %u%n", &want, &used) == 1);
			EXPECT(bfi_pre_bit(bfi_hash_probe(h, i)) == want && want < 512);
			rest += used;
		}
	}
	return rows;
}

static char *spec;

static void test_spec_vectors(void)
{
	EXPECT(check_table(spec, 1000003, 7, 1) >= 10);
	EXPECT(check_table(spec, 64, 3, 0) >= 3);
	EXPECT(check_lines(spec, 1048576, 7) >= 8);
}

static void test_positions_in_range(void)
{
	uint64_t s = 1;
	for (int t = 0; t < 100000; t++) {
		uint64_t key = test_rand(&s), m = 1 + test_rand(&s) % (1ull << (t % 41));
		uint64_t pos[BFI_MAX_K];
		EXPECT_RC(bfi_key_positions(&key, sizeof key, m, BFI_MAX_K, pos), 0);
		for (uint32_t i = 0; i < BFI_MAX_K; i++)
			if (pos[i] >= m) {
				EXPECT(pos[i] < m);
				return;
			}
	}
	uint64_t pos[1];
	EXPECT_RC(bfi_key_positions("a", 1, 0, 1, pos), BFI_E_INVALID);
	EXPECT_RC(bfi_key_positions("a", 1, 10, 0, pos), BFI_E_INVALID);
	EXPECT_RC(bfi_key_positions(NULL, 1, 10, 1, pos), BFI_E_INVALID);
	EXPECT_RC(bfi_key_positions(NULL, 0, 10, 1, pos), 0);
}

/* Positions must look uniform: chi-square over 64 buckets for many keys. */
static void test_positions_uniform(void)
{
	enum { B = 64, KEYS = 200000, K = 7 };
	static uint64_t count[B];
	memset(count, 0, sizeof count);
	for (uint64_t i = 0; i < KEYS; i++) {
		char key[32];
		int n = snprintf(key, sizeof key, "key-%llu", (unsigned long long)i);
		uint64_t pos[K];
		EXPECT_RC(bfi_key_positions(key, (size_t)n, B, K, pos), 0);
		for (int j = 0; j < K; j++)
			count[pos[j]]++;
	}
	double expect = (double)KEYS * K / B, chi = 0;
	for (int b = 0; b < B; b++)
		chi += ((double)count[b] - expect) * ((double)count[b] - expect) / expect;
	/* 63 degrees of freedom: chi^2 above 110 has p < 0.0002. */
	EXPECT(chi < 110);
}

/* No key may collapse its k positions: the flaw the mix step fixes. */
static void test_positions_spread(void)
{
	uint64_t m = 35387, worst = 0;
	for (uint64_t i = 0; i < 300000; i++) {
		char key[32];
		int n = snprintf(key, sizeof key, "w%llu", (unsigned long long)i);
		uint64_t pos[7];
		EXPECT_RC(bfi_key_positions(key, (size_t)n, m, 7, pos), 0);
		uint64_t same = 0;
		for (int a = 0; a < 7; a++)
			for (int b = a + 1; b < 7; b++)
				same += pos[a] == pos[b];
		if (same > worst)
			worst = same;
	}
	/* Two equal positions among 21 pairs happen (p ~ 6e-4 per key); more is a bug. */
	EXPECT(worst <= 2);
}

/* The library says which format it is: the one spec/format.md's header table names. */
static void test_version(void)
{
	unsigned major = 0, minor = 99;
	const char *v = bfi_version(&major, &minor);
	EXPECT(v && !strcmp(v, BFI_VERSION_STRING) && major == BFI_VERSION_MAJOR &&
	       minor == BFI_VERSION_MINOR);
	EXPECT(bfi_version(NULL, NULL) == v);
	char want[64];
	snprintf(want, sizeof want, "format %u.%u", major, minor);
	EXPECT(strstr(spec, want) != NULL);
}

/* Many keys hashed in one call: each as bfi_hash_key hashes it alone, empty ones too. */
static void test_hash_keys(void)
{
	const char buf[] = "applebananaxcherry";
	const size_t ends[] = {5, 11, 11, 12, 18}; /* apple, banana, "", x, cherry */
	bfi_keyhash out[5];
	EXPECT_RC(bfi_hash_keys(buf, ends, 5, out), 0);
	for (size_t i = 0, from = 0; i < 5; from = ends[i++]) {
		bfi_keyhash h = bfi_hash_key(buf + from, ends[i] - from);
		EXPECT(out[i].h1 == h.h1 && out[i].h2 == h.h2);
	}
	const size_t empty[] = {0, 0};
	EXPECT_RC(bfi_hash_keys(NULL, empty, 2, out), 0);
	EXPECT(out[1].h1 == bfi_hash_key("", 0).h1);
	const size_t down[] = {5, 3};
	EXPECT_RC(bfi_hash_keys(buf, down, 2, out), BFI_E_INVALID);
	EXPECT_RC(bfi_hash_keys(NULL, ends, 2, out), BFI_E_INVALID);
	EXPECT_RC(bfi_hash_keys(buf, NULL, 2, out), BFI_E_INVALID);
	EXPECT_RC(bfi_hash_keys(NULL, NULL, 0, NULL), 0);
}

int main(void)
{
	size_t len;
	spec = (char *)test_read_file("spec/format.md", &len);
	if (spec == NULL) {
		fprintf(stderr, "run from the source root: spec/format.md not found\n");
		return 2;
	}
	spec = realloc(spec, len + 1);
	spec[len] = 0;
	test_run("hash: spec test vectors", test_spec_vectors);
	test_run("hash: positions in range for every m", test_positions_in_range);
	test_run("hash: positions uniform (chi-square)", test_positions_uniform);
	test_run("hash: k positions never collapse", test_positions_spread);
	test_run("hash: bfi_version names the format the spec describes", test_version);
	test_run("hash: bfi_hash_keys hashes each key as bfi_hash_key does", test_hash_keys);
	free(spec);
	return test_exit();
}
