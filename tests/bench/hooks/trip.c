/*
 * hooks/trip.c - the function-entry hook of a build made with
 * -finstrument-functions (tests/bench/trip.sh): each entry and exit of an
 * instrumented function, with its thread, its object and its offset in
 * that object, appended to the file $BFI_TRIP as text lines
 * "TID E|X OBJECT OFFSET". Preloaded as a shared library, built by
 * trip.sh alone (configure builds the C files of tests/bench, not of this folder).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

void __cyg_profile_func_enter(void *fn, void *site) __attribute__((no_instrument_function));
void __cyg_profile_func_exit(void *fn, void *site) __attribute__((no_instrument_function));

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *out;
static int off;

__attribute__((no_instrument_function)) static void note(char what, void *fn)
{
	if (off)
		return;
	Dl_info di;
	if (dladdr(fn, &di) == 0 || di.dli_fname == NULL)
		return;
	pthread_mutex_lock(&lock);
	if (out == NULL) {
		const char *path = getenv("BFI_TRIP");
		if (path == NULL || (out = fopen(path, "a")) == NULL) {
			off = 1;
			pthread_mutex_unlock(&lock);
			return;
		}
		setvbuf(out, NULL, _IOLBF, 0);
	}
	fprintf(out, "%ld %c %s %lx\n", (long)syscall(SYS_gettid), what, di.dli_fname,
	        (unsigned long)((char *)fn - (char *)di.dli_fbase));
	pthread_mutex_unlock(&lock);
}

void __cyg_profile_func_enter(void *fn, void *site)
{
	(void)site;
	note('E', fn);
}

void __cyg_profile_func_exit(void *fn, void *site)
{
	(void)site;
	note('X', fn);
}
