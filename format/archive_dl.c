/* archive_dl.c - libarchive loaded on first use (archive_dl.h). */
#define BFI_ARCHIVE_DL_SELF
#include <pthread.h>

#include "dl.h"
#include "archive_dl.h"

/* configure gives the soname bare (-DBFI_LIBARCHIVE_SONAME=libarchive.so.13) */
#define BFI_STR2(x) #x
#define BFI_STR(x) BFI_STR2(x)
#ifdef BFI_LIBARCHIVE_SONAME
#define SONAME BFI_STR(BFI_LIBARCHIVE_SONAME)
#else
#define SONAME "libarchive.so.13"
#endif

struct bfi_archive_calls bfi__archive;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded_rc;
static char why_buf[512];

static void load(void)
{
#define BFI_DL_NAME(f) #f,
#define BFI_DL_SLOT(f) (void **)&bfi__archive.f,
	static const char *const names[] = {BFI_ARCHIVE_CALLS(BFI_DL_NAME)};
	void **const slots[] = {BFI_ARCHIVE_CALLS(BFI_DL_SLOT)};
#undef BFI_DL_NAME
#undef BFI_DL_SLOT
	loaded_rc = bfi__dl_fill(SONAME, "packs need libarchive (Debian: libarchive13)", names, slots,
	                         sizeof names / sizeof *names, why_buf, sizeof why_buf);
}

int bfi_archive_load(const char **why)
{
	pthread_once(&once, load);
	if (loaded_rc && why)
		*why = why_buf;
	return loaded_rc;
}
