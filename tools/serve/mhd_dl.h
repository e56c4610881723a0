/*
 * mhd_dl.h - libmicrohttpd, loaded when bfi serve starts (mhd_dl.c)
 * instead of linked: libmicrohttpd brings gnutls and ten more libraries,
 * which every bfi process would load and relocate at its start, and only
 * bfi serve speaks HTTP. Files that call libmicrohttpd include this after
 * <microhttpd.h>: each call below goes through a pointer that
 * bfi_mhd_load() fills.
 */
#ifndef BFI_MHD_DL_H
#define BFI_MHD_DL_H

#include <microhttpd.h>

#define BFI_MHD_CALLS(X)                                                                           \
	X(MHD_add_response_header) X(MHD_create_response_from_buffer) X(MHD_destroy_response)         \
	X(MHD_get_connection_info) X(MHD_get_connection_values) X(MHD_get_connection_values_n)        \
	X(MHD_get_daemon_info) X(MHD_queue_response) X(MHD_quiesce_daemon) X(MHD_start_daemon)        \
	X(MHD_stop_daemon)

struct bfi_mhd_calls {
#define BFI_MHD_PTR(f) __typeof__(f) *f;
	BFI_MHD_CALLS(BFI_MHD_PTR)
#undef BFI_MHD_PTR
};
extern struct bfi_mhd_calls bfi__mhd;

/*
 * Load libmicrohttpd once (thread-safe). 0, or -ENOSYS with *why (if not
 * NULL) saying what is missing, for an error message.
 */
int bfi_mhd_load(const char **why);

#ifndef BFI_MHD_DL_SELF
#define MHD_add_response_header bfi__mhd.MHD_add_response_header
#define MHD_create_response_from_buffer bfi__mhd.MHD_create_response_from_buffer
#define MHD_destroy_response bfi__mhd.MHD_destroy_response
#define MHD_get_connection_info bfi__mhd.MHD_get_connection_info
#define MHD_get_connection_values bfi__mhd.MHD_get_connection_values
#define MHD_get_connection_values_n bfi__mhd.MHD_get_connection_values_n
#define MHD_get_daemon_info bfi__mhd.MHD_get_daemon_info
#define MHD_queue_response bfi__mhd.MHD_queue_response
#define MHD_quiesce_daemon bfi__mhd.MHD_quiesce_daemon
#define MHD_start_daemon bfi__mhd.MHD_start_daemon
#define MHD_stop_daemon bfi__mhd.MHD_stop_daemon
#endif

#endif
