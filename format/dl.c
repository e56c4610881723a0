/* dl.c - a library's calls filled in from dlopen and dlsym (dl.h). */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>

#include "dl.h"

int bfi__dl_fill(const char *soname, const char *need, const char *const *names,
                 void **const *slots, size_t n, char *why, size_t cap)
{
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		snprintf(why, cap, "%s: %s%s", need, e ? e : soname, e ? "" : " not found");
		return -ENOSYS;
	}
	for (size_t i = 0; i < n; i++)
		/* a function pointer from dlsym's object pointer: POSIX allows it, C does not say */
		if ((*slots[i] = dlsym(h, names[i])) == NULL) {
			snprintf(why, cap, "%s lacks %s", soname, names[i]);
			return -ENOSYS;
		}
	return 0;
}
