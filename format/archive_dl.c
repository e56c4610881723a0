/* archive_dl.c - libarchive loaded on first use (archive_dl.h). */
#define BFI_ARCHIVE_DL_SELF
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

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
	void *h = dlopen(SONAME, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		snprintf(why_buf, sizeof why_buf, "packs need libarchive (Debian: libarchive13): %s",
		         e ? e : SONAME " not found");
		loaded_rc = -ENOSYS;
		return;
	}
	/* a function pointer from dlsym's object pointer: POSIX allows it, C does not say */
#define BFI_ARCHIVE_SYM(f)                                                                         \
	if ((*(void **)&bfi__archive.f = dlsym(h, #f)) == NULL) {                                   \
		snprintf(why_buf, sizeof why_buf, "%s lacks %s", SONAME, #f);           \
		loaded_rc = -ENOSYS;                                                                   \
		return;                                                                                \
	}
	BFI_ARCHIVE_CALLS(BFI_ARCHIVE_SYM)
#undef BFI_ARCHIVE_SYM
}

int bfi_archive_load(const char **why)
{
	pthread_once(&once, load);
	if (loaded_rc && why)
		*why = why_buf;
	return loaded_rc;
}
