/*
 * fuzz_pack.c - any bytes as a pack (spec/format.md, "Packs"): its seek
 * table read, its frames decompressed and checked, its tar members walked
 * and read to the end, some skipped unread; then opened to be scanned in
 * place (BFI_OPEN_SCAN) and scanned with a key and a term list, its frames
 * read at random; then unpacked. Nothing may crash, hang, read out of
 * bounds, or write outside the output.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "bfi.h"
#include "bfi_pack.h"
#include "bfi_writer.h"
#include "fuzz.h"

const char *fuzz_name = "pack";

static void walk(const char *path, int skip_index)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return;
	struct bfi_pack_in *p = NULL;
	struct bfi_pack_error e;
	if (bfi_pack_in_open(fd, &p, &e) == 0) {
		static uint8_t buf[1 << 16];
		struct bfi_pack_member m;
		int rc;
		while ((rc = bfi_pack_in_next(p, &m, &e)) == 0) {
			if (skip_index && m.file && m.file[0] == 'i')
				continue; /* left unread: skipped by frames */
			int64_t r;
			while ((r = bfi_pack_in_read(p, buf, sizeof buf, &e)) > 0)
				;
			if (r < 0)
				break;
		}
		(void)bfi_pack_in_is_collection(p);
		(void)bfi_pack_in_manifest(p);
		(void)bfi_pack_in_progress(p);
		bfi_pack_in_close(&p);
	}
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file("in.pack", data, size);
	if (path == NULL)
		return 0;
	walk(path, 0);
	walk(path, 1);
	bfi_snapshot *s = NULL;
	if (bfi_open(path, BFI_OPEN_SCAN | BFI_OPEN_NO_CATALOG, &s) == 0) {
		bfi_expr *qs[2] = {NULL, NULL};
		bfi_result *res[2] = {NULL, NULL};
		const void *terms[3] = {"a", "b", "c"};
		size_t lens[3] = {1, 1, 1};
		if (bfi_expr_key("a", 1, &qs[0]) == 0 && bfi_expr_terms(terms, lens, 3, &qs[1]) == 0 &&
		    bfi_result_create(&res[0]) == 0 && bfi_result_create(&res[1]) == 0)
			TRY(bfi_scan(s, 0, (const bfi_expr *const *)qs, 2, 0.5, res, 1u << 20, NULL));
		for (int i = 0; i < 2; i++) {
			bfi_expr_free(&qs[i]);
			bfi_result_destroy(&res[i]);
		}
		bfi_close(&s);
	}
	char out[600], err[4600], warn[4600];
	snprintf(out, sizeof out, "%s/unpacked", fuzz_dir());
	struct bfi_pack_options o;
	bfi_pack_options_init(&o);
	o.memory = 256u << 20;
	if (bfi_unpack(path, out, &o, err, sizeof err, warn, sizeof warn) == 0) {
		/* a collection or a snapshot: remove it as bfi would replace it */
		char cmd[700];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", out);
		TRY(system(cmd));
	}
	return 0;
}
