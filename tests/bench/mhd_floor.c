/*
 * mhd_floor.c - the floor under bfi serve's request rate: libmicrohttpd
 * alone, configured as bfi serve configures it (epoll, a thread pool of
 * the same size, the same connection limits and memory pool), answering every request
 * with one fixed 40-byte JSON body. tests/bench/serve.sh measures both
 * with wrk, alternating, and compares their rates. Given BYTES, the body
 * is that long instead: the floor for answers of that size.
 * Usage: build/tests/bench/mhd_floor PORT THREADS [BYTES]   (until SIGTERM or SIGINT)
 */
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char fixed[] = "{\"snapshot\": \"s\", \"results\": [0, 1, 2]}"; /* 40 bytes */
static char *body = (char *)fixed;
static size_t body_len = sizeof fixed - 1;

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **con_cls)
{
	(void)cls, (void)url, (void)method, (void)version, (void)upload;
	if (*con_cls == NULL) { /* headers in: wait for the whole request, as bfi serve does */
		*con_cls = (void *)1;
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0;
		return MHD_YES;
	}
	struct MHD_Response *r =
	    MHD_create_response_from_buffer(body_len, body, MHD_RESPMEM_PERSISTENT);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	enum MHD_Result ok = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ok;
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: mhd_floor PORT THREADS [BYTES]\n");
		return 2;
	}
	if (argc == 4) { /* a JSON string of that many bytes in all */
		body_len = (size_t)strtoull(argv[3], NULL, 10);
		if (body_len < 2 || (body = malloc(body_len)) == NULL)
			return 2;
		memset(body, 'x', body_len);
		body[0] = body[body_len - 1] = '"';
	}
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	struct MHD_Daemon *d = MHD_start_daemon(
	    MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC, (uint16_t)atoi(argv[1]),
	    NULL, NULL, answer, NULL, MHD_OPTION_THREAD_POOL_SIZE, (unsigned)atoi(argv[2]),
	    MHD_OPTION_CONNECTION_LIMIT, 1000u, MHD_OPTION_CONNECTION_TIMEOUT, 30u,
	    MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
	    (size_t)(128u << 10), MHD_OPTION_END);
	if (d == NULL) {
		fprintf(stderr, "mhd_floor: cannot listen on port %s\n", argv[1]);
		return 2;
	}
	int sig;
	sigwait(&set, &sig);
	MHD_stop_daemon(d);
	return 0;
}
