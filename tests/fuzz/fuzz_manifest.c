/*
 * fuzz_manifest.c - any bytes as a collection's MANIFEST, beside one real
 * segment: decoded alone, then opened as a collection, queried, inspected
 * and verified. Nothing may crash, hang or read out of bounds.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "bfi.h"
#include "bfi_manifest.h"
#include "bfi_writer.h"
#include "fuzz.h"

const char *fuzz_name = "manifest";

/* The collection directory, with its one segment built once: four small sets. */
static const char *collection(void)
{
	static char dir[512];
	if (dir[0])
		return dir;
	snprintf(dir, sizeof dir, "%s/coll", fuzz_dir());
	char seg[600];
	snprintf(seg, sizeof seg, "%s/seg-0000000000000001-0000", dir);
	struct bfi_build_options o;
	bfi_build_options_init(&o);
	o.bits = 256;
	o.hashes = 3;
	o.keep_order = 1;
	bfi_writer *w = NULL;
	mkdir(dir, 0755);
	if (bfi_writer_create(&o, &w) == 0) {
		for (unsigned s = 0; s < 4; s++) {
			char name[8], key[8];
			uint32_t ord;
			if (bfi_writer_set(w, name, (size_t)snprintf(name, sizeof name, "s%u", s), &ord) != 0)
				break;
			for (unsigned i = 0; i < 5; i++)
				TRY(bfi_writer_key(w, ord, key, (size_t)snprintf(key, sizeof key, "k%u", s + i)));
		}
		TRY(bfi_writer_finish(w, seg, NULL));
	}
	bfi_writer_destroy(&w);
	return dir;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bfi_manifest m;
	if (bfi_manifest_decode(data, size, &m, NULL) == 0)
		bfi_manifest_free(&m);
	const char *dir = collection();
	char path[600];
	snprintf(path, sizeof path, "%s/" BFI_MANIFEST_NAME, dir);
	FILE *f = fopen(path, "wb");
	if (f == NULL)
		return 0;
	fwrite(data, 1, size, f);
	fclose(f);
	bfi_snapshot *s;
	if (bfi_open(dir, 0, &s) == 0) {
		fuzz_queries(s);
		fuzz_inspect(s);
		bfi_close(&s);
	}
	struct bfi_verify_report rep;
	TRY(bfi_verify(dir, &rep, NULL, NULL));
	return 0;
}
