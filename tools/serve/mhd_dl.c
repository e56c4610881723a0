/* mhd_dl.c - libmicrohttpd loaded when bfi serve starts (mhd_dl.h). */
#define BFI_MHD_DL_SELF
#include <pthread.h>

#include "dl.h"
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
#define BFI_DL_NAME(f) #f,
#define BFI_DL_SLOT(f) (void **)&bfi__mhd.f,
	static const char *const names[] = {BFI_MHD_CALLS(BFI_DL_NAME)};
	void **const slots[] = {BFI_MHD_CALLS(BFI_DL_SLOT)};
#undef BFI_DL_NAME
#undef BFI_DL_SLOT
	loaded_rc = bfi__dl_fill(SONAME, "bfi serve needs libmicrohttpd (Debian: libmicrohttpd12)",
	                         names, slots, sizeof names / sizeof *names, why_buf, sizeof why_buf);
}

int bfi_mhd_load(const char **why)
{
	pthread_once(&once, load);
	if (loaded_rc && why)
		*why = why_buf;
	return loaded_rc;
}
