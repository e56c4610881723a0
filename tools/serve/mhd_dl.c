/* mhd_dl.c - libmicrohttpd loaded when bfi serve starts (mhd_dl.h). */
#define BFI_MHD_DL_SELF
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#include "mhd_dl.h"

/* configure gives the soname bare (-DBFI_MHD_SONAME=libmicrohttpd.so.12) */
#define BFI_STR2(x) #x
#define BFI_STR(x) BFI_STR2(x)
#ifdef BFI_MHD_SONAME
#define SONAME BFI_STR(BFI_MHD_SONAME)
#else
#define SONAME "libmicrohttpd.so.12"
#endif

struct bfi_mhd_calls bfi__mhd;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded_rc;
static char why_buf[512];

static void load(void)
{
	void *h = dlopen(SONAME, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		snprintf(why_buf, sizeof why_buf, "bfi serve needs libmicrohttpd (Debian: libmicrohttpd12): %s",
		         e ? e : SONAME " not found");
		loaded_rc = -ENOSYS;
		return;
	}
	/* a function pointer from dlsym's object pointer: POSIX allows it, C does not say */
#define BFI_MHD_SYM(f)                                                                             \
	if ((*(void **)&bfi__mhd.f = dlsym(h, #f)) == NULL) {                                       \
		snprintf(why_buf, sizeof why_buf, "%s lacks %s", SONAME, #f);                          \
		loaded_rc = -ENOSYS;                                                                   \
		return;                                                                                \
	}
	BFI_MHD_CALLS(BFI_MHD_SYM)
#undef BFI_MHD_SYM
}

int bfi_mhd_load(const char **why)
{
	pthread_once(&once, load);
	if (loaded_rc && why)
		*why = why_buf;
	return loaded_rc;
}
