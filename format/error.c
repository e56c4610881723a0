/* error.c - bfi_strerror(): bfi's own codes from a table, errno via strerror. */
#include <string.h>

#include "bfi_error.h"

static const struct {
	int code;
	const char *text;
} table[] = {
	{BFI_E_INVALID, "invalid argument"},
	{BFI_E_LIMIT, "a format limit was exceeded"},
	{BFI_E_NOT_FOUND, "no such set"},
	{BFI_E_SYNTAX, "query expression syntax error"},
	{BFI_E_KEY_FORM, "the query is made otherwise than the snapshot's keys were (its catalog "
	                 "records their input kind and k-mer length), so it would match nothing"},
	{BFI_E_TIMEOUT, "the query ran past its deadline"},
	{BFI_E_TRUNCATED, "file is truncated (shorter than its header says)"},
	{BFI_E_BAD_MAGIC, "not a bfi file of the kind expected (bad magic)"},
	{BFI_E_BAD_TRAILER, "index file trailer is damaged (bad end magic)"},
	{BFI_E_VERSION, "file format version is not one this reader reads (a newer one needs a "
	                "newer bfi; a snapshot written in format 2.x or before must be rebuilt "
	                "from its inputs with bfi build)"},
	{BFI_E_INCOMPAT, "index file uses an incompatible feature this reader does not know"},
	{BFI_E_RESERVED, "index file has a nonzero reserved field"},
	{BFI_E_HEADER_CHECKSUM, "index header checksum mismatch"},
	{BFI_E_TABLE_CHECKSUM, "section table checksum mismatch"},
	{BFI_E_BAD_SECTION, "section entry out of bounds, misaligned or overlapping"},
	{BFI_E_ENCODING, "section encoding not supported by this reader"},
	{BFI_E_BAD_LAYOUT, "layout descriptor is inconsistent"},
	{BFI_E_NO_LAYOUT, "index has no layout this reader can query"},
	{BFI_E_DATA_CHECKSUM, "data checksum mismatch"},
	{BFI_E_SIZE, "index file is longer than its header says"},
	{BFI_E_UNKNOWN_SECTION, "index has a required section kind this reader does not know"},
	{BFI_E_NOT_REGULAR, "not a regular file (a directory, FIFO, device or socket)"},
	{BFI_E_CHANGED, "a snapshot file was changed in place under this reader; reopen the snapshot"},
	{BFI_E_MANIFEST, "collection manifest is damaged (checksum, sizes or tables)"},
	{BFI_E_PACK, "not a bfi pack, or its seek table or members are not what a pack holds"},
	{BFI_E_PACK_TRUNCATED, "pack is truncated (shorter than its seek table says)"},
	{BFI_E_PACK_FRAME, "a frame of the pack is damaged (it does not decompress to its recorded "
	                   "size and checksum)"},
	{BFI_E_SCAN_ONLY, "this pack was opened to be scanned in place (BFI_OPEN_SCAN): only bfi_scan "
	                  "answers from it"},
	{BFI_E_CATALOG_MISMATCH, "catalog does not belong to this index"},
	{BFI_E_CATALOG, "catalog is malformed"},
	{BFI_E_NO_CATALOG, "snapshot was opened without its catalog"},
	{BFI_E_LMDB, "LMDB error"},
	{BFI_E_INPUT, "malformed input"},
	{BFI_E_NO_SETS, "input holds no sets"},
	{BFI_E_DUP_SET, "duplicate set name in input"},
	{BFI_E_EXISTS, "output path exists and is not a bfi snapshot"},
	{BFI_E_FILTER_MISMATCH, "the filters differ in width, hash count or hash function"},
	{BFI_E_BUSY, "another writer holds the collection's lock"},
	{BFI_E_JOIN, "the snapshots cannot be joined: they differ in k or in how their keys were "
	             "made, hold a set name twice, or hold no layout a join can copy"},
};

const char *bfi_strerror(int code)
{
	if (code == 0)
		return "success";
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		if (table[i].code == code)
			return table[i].text;
	if (code < 0 && code > BFI_E_LAST)
		return strerror(-code);
	return "unknown error";
}
