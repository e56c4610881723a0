/*
 * cmd_serve.c - bfi serve: a read-only HTTP query server over snapshots
 * and collections. This file is its options and its start and stop; the
 * server is tools/serve/ (http.c: libmicrohttpd; watch.c: the main
 * thread's opens, inotify and signals; routes.c and the rest: requests).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "serve.h"
#include "opts.h"
#include "tools.h"

/* What the options ask. */
struct serve_args {
	const char *listen, *cors;
	uint64_t threads, max_conn, max_held;
	size_t max_body, max_keys, max_reply;
	double timeout;
	int warm, quiet;
};

static int take_timeout(void *ctx, const char *arg)
{
	struct serve_args *a = ctx;
	char *end;
	a->timeout = strtod(arg, &end);
	if (!*end && a->timeout >= 0.001 && a->timeout <= 86400)
		return 0;
	fprintf(stderr, "bfi serve: --timeout must be 0.001..86400 seconds\n");
	return EXIT_USAGE;
}

/* One origin, or *: its bytes go into a header, so nothing that could end it. */
static int take_cors(void *ctx, const char *arg)
{
	struct serve_args *a = ctx;
	if (strcmp(arg, "*") && strncmp(arg, "http://", 7) && strncmp(arg, "https://", 8)) {
		fprintf(stderr, "bfi serve: --cors takes an origin (https://example.org) or *\n");
		return usage_try("serve");
	}
	for (const char *p = arg; *p; p++)
		if ((unsigned char)*p <= 0x20 || *p == 0x7f || *p == ',' || *p == '"') {
			fprintf(stderr, "bfi serve: --cors: an origin holds no blank, control "
			                "byte, comma or quote\n");
			return usage_try("serve");
		}
	a->cors = arg;
	return 0;
}

static const char head[] =
	"Usage: bfi serve [OPTIONS] NAME=PATH...\n"
	"\n"
	"Serve the snapshots or collections at each PATH, read-only, over HTTP\n"
	"under NAME (letters, digits, '.', '_' and '-'). Endpoints, JSON in and out:\n"
	"  GET  /v1/NAME/query?key=K[&key=K...]   answer keys (also format=,\n"
	"                                         limit=, layout=)\n"
	"  GET  /v1/NAME/query?q=Q[&q=Q...]       answer queries formed as the\n"
	"                  snapshot's keys were made, as bfi query does with no\n"
	"                  query options (also threshold=)\n"
	"  POST /v1/NAME/query   a JSON object with one of\n"
	"         {\"queries\": [\"q\", ...]} (formed as q=Q are)  {\"keys\": [\"k\", ...]}\n"
	"         {\"text\": \"...\"}  {\"expr\": \"a AND (b OR c)\"}  {\"path\": \"/a/b\"}\n"
	"         {\"sequences\": [{\"id\": \"r1\", \"seq\": \"ACGT...\"}]}\n"
	"         (queries, text, expr and path also take a string), and optionally\n"
	"         \"threshold\": T (queries, text, sequences), \"format\": \"names\",\n"
	"         \"ordinals\" or \"count\" (or \"tsv\", \"matrix\": bfi query --format's\n"
	"         table, for one name), \"limit\": N, \"layout\": \"flat\"...\n"
	"       answers {\"snapshot\": NAME, \"generation\": G, \"results\": [...]},\n"
	"       each result the object bfi query --json prints for that query\n"
	"  GET or POST /v1/NAME,NAME.../query   the same queries of several\n"
	"       names at once: {\"snapshots\": [each NAME's answer, in order]}\n"
	"  GET  /v1/NAME   what bfi inspect --json says of it (its \"path\" null)\n"
	"  GET  /v1        the names served\n"
	"  GET  /healthz   200 once every PATH is open and sound, else 503 and\n"
	"                  which are not: opening, changed (in place), or gone\n"
	"  GET  /metrics   Prometheus text: requests, errors and latency by\n"
	"                  endpoint, queries and keys, generations, bytes mapped\n"
	"A bad request gets a 4xx (or 503, 504) with {\"error\": ..., \"code\": ...}.\n"
	"\n"
	"A PATH republished (bfi build, append, compact... publish by rename) is\n"
	"noticed through inotify, or on SIGHUP, opened in the background and\n"
	"swapped in; requests in flight finish on the old one, which is unmapped\n"
	"when the last of them ends. One that fails to open is logged, and the\n"
	"old one goes on serving. A file changed in place (overwritten, truncated)\n"
	"is found by a check after each request's queries and on each event: no\n"
	"answer from it is sent, and that NAME answers 503 until a whole snapshot\n"
	"is published there, while the others go on. SIGTERM or SIGINT: stop\n"
	"accepting, finish the requests in flight (for --timeout and a second at\n"
	"most; past that they are abandoned), exit 0.\n"
	"\n"
	"A snapshot larger than three quarters of what the server may hold (the\n"
	"least of MemAvailable, its memory cgroup's limit and ulimit -v) is\n"
	"served from its mapping all the same, each request reading the pages its\n"
	"keys need, and logged so; it is not warmed. A pack is read into memory\n"
	"whole to be served: one whose index passes that is refused (unpack it).\n"
	"\n"
	"Options:\n";

static const char tail[] =
	"\n"
	"Every PATH is opened before it listens; the first line on standard error\n"
	"then says where it listens.\n"
	"\n"
	"Exit status: 0 after SIGTERM or SIGINT, or 2 for a usage error or a\n"
	"PATH that cannot be opened at start.\n";

static const struct opt_row rows[] = {
	{"listen", 300, "ADDR:PORT",
	 "address to listen on (default 127.0.0.1:8080;\n"
	 "port 0 picks a free one; [::1]:PORT for IPv6)",
	 OPT_STR, offsetof(struct serve_args, listen), 0, 0, NULL, NULL},
	{"threads", 301, "N",
	 "worker threads (default: the cores)",
	 OPT_U64, offsetof(struct serve_args, threads), 1, 256, "--threads must be 1..256", NULL},
	{"warm", 302, NULL,
	 "read each new generation into memory before it\n"
	 "is swapped in (MADV_WILLNEED)",
	 OPT_FLAG, offsetof(struct serve_args, warm), 0, 0, NULL, NULL},
	{"max-body", 303, "SIZE",
	 "largest request body (default 8M)",
	 OPT_SIZE, offsetof(struct serve_args, max_body), 1, 1u << 30, "--max-body must be 1 byte .. 1G", NULL},
	{"max-keys", 304, "N",
	 "most queries in one request (default 100000)",
	 OPT_SIZE, offsetof(struct serve_args, max_keys), 1, 100000000, "--max-keys must be 1..100000000", NULL},
	{"max-reply", 305, "SIZE",
	 "largest reply (default 64M): a request whose\n"
	 "answers pass it gets 413",
	 OPT_SIZE, offsetof(struct serve_args, max_reply), 4096, 4ull << 30, "--max-reply must be 4K .. 4G", NULL},
	{"reply-memory", 306, "SIZE",
	 "replies made and waiting for their clients hold\n"
	 "this much at most (default 1G): past it, new\n"
	 "queries get 503",
	 OPT_U64, offsetof(struct serve_args, max_held), 4096, 1ull << 50, "--reply-memory must be 4K or more", NULL},
	{"timeout", 307, "SECONDS",
	 "longest a request may take: to arrive whole from\n"
	 "its first byte, to be answered (checked inside\n"
	 "long queries too), and for its reply to be taken;\n"
	 "also how long a connection may stay idle\n"
	 "(default 30)",
	 OPT_FN, 0, 0, 0, NULL, take_timeout},
	{"max-connections", 308, "N",
	 "\n"
	 "open connections at most (default 1000)",
	 OPT_U64, offsetof(struct serve_args, max_conn), 1, 100000, "--max-connections must be 1..100000", NULL},
	{"cors", 309, "ORIGIN",
	 "let pages from ORIGIN (https://example.org, or *\n"
	 "for any) read the answers: every reply says so\n"
	 "(Access-Control-Allow-Origin), and OPTIONS, a\n"
	 "browser's preflight, gets 204 with the methods\n"
	 "and headers allowed",
	 OPT_FN, 0, 0, 0, NULL, take_cors},
	{"quiet", 'q', NULL,
	 "no line per request on standard error",
	 OPT_FLAG, offsetof(struct serve_args, quiet), 0, 0, NULL, NULL},
	{"help", 'h', NULL,
	 "show this help",
	 OPT_HELP, 0, 0, 0, NULL, NULL},
	{NULL, 0, NULL, NULL, OPT_FN, 0, 0, 0, NULL, NULL},
};

static const struct opt_cmd serve_cmd = {
    .me = "bfi serve",
    .head = head,
    .tail = tail,
    .rows = rows,
    .column = 26,
};

/* --listen ADDR:PORT, [V6]:PORT */
static int parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[64];
	const char *colon = strrchr(s, ':');
	if (colon == NULL || (size_t)(colon - s) >= sizeof host)
		return -1;
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = 0;
	char *end;
	/* digits only: strtoul would also take "+80" and " 80" */
	if (!colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1) || strlen(colon + 1) > 5)
		return -1;
	unsigned long port = strtoul(colon + 1, &end, 10);
	if (*end || port > 65535)
		return -1;
	memset(ss, 0, sizeof *ss);
	struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;
	size_t hl = strlen(host);
	if (hl > 2 && host[0] == '[' && host[hl - 1] == ']') {
		host[hl - 1] = 0;
		if (inet_pton(AF_INET6, host + 1, &v6->sin6_addr) != 1)
			return -1;
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons((uint16_t)port);
		*len = sizeof *v6;
		return 0;
	}
	if (inet_pton(AF_INET, host, &v4->sin_addr) != 1)
		return -1;
	v4->sin_family = AF_INET;
	v4->sin_port = htons((uint16_t)port);
	*len = sizeof *v4;
	return 0;
}

static int name_ok(const char *s, size_t n)
{
	if (n == 0 || n > 100)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == '_' || s[i] == '-'))
			return 0;
	return strcmp(s, ".") && strcmp(s, "..");
}

int cmd_serve(int argc, char **argv)
{
	static struct server sv;
	struct serve_args opt = {.listen = "127.0.0.1:8080", .max_conn = 1000, .max_held = 1ull << 30,
	                       .max_body = 8u << 20, .max_keys = 100000, .max_reply = 64u << 20,
	                       .timeout = 30};
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	opt.threads = cores > 0 ? (uint64_t)cores : 1;
	int rc = opts_parse(&serve_cmd, argc, argv, &opt);
	if (rc)
		return rc - 1;
	const char *listen = opt.listen;
	uint64_t threads = opt.threads, max_conn = opt.max_conn;
	int quiet = opt.quiet;
	sv.max_body = opt.max_body;
	sv.max_keys = opt.max_keys;
	sv.max_reply = opt.max_reply;
	sv.max_held = (long long)opt.max_held;
	sv.timeout = opt.timeout;
	sv.cors = opt.cors;
	sv.warm = opt.warm;
	struct sockaddr_storage addr;
	socklen_t addr_len;
	if (parse_listen(listen, &addr, &addr_len) != 0) {
		fprintf(stderr, "bfi serve: --listen %s: give ADDR:PORT, e.g. 127.0.0.1:8080 or "
		                "[::1]:8080\n", listen);
		return EXIT_USAGE;
	}
	if (optind >= argc) {
		fprintf(stderr, "bfi serve: need NAME=PATH\n");
		return usage_try("serve");
	}
	sv.n_slots = (size_t)(argc - optind);
	sv.slots = calloc(sv.n_slots, sizeof *sv.slots);
	if (sv.slots == NULL) {
		fprintf(stderr, "bfi serve: out of memory\n");
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < sv.n_slots; i++) {
		char *a = argv[optind + (int)i], *eq = strchr(a, '=');
		if (eq == NULL || !eq[1]) {
			fprintf(stderr, "bfi serve: %s: give NAME=PATH\n", a);
			return EXIT_USAGE;
		}
		*eq = 0;
		if (!name_ok(a, strlen(a))) {
			fprintf(stderr, "bfi serve: %s: a NAME is 1..100 letters, digits, '.', '_' or '-'\n",
			        a);
			return EXIT_USAGE;
		}
		for (size_t j = 0; j < i; j++)
			if (!strcmp(sv.slots[j].name, a)) {
				fprintf(stderr, "bfi serve: %s is given twice\n", a);
				return EXIT_USAGE;
			}
		sv.slots[i].name = a;
		sv.slots[i].path = eq + 1;
		pthread_mutex_init(&sv.slots[i].mu, NULL);
	}
	/* the HTTP library, which no other command loads (mhd_dl.h) */
	const char *why = NULL;
	if (bfi_mhd_load(&why) != 0) {
		fprintf(stderr, "bfi serve: %s\n", why);
		return EXIT_USAGE;
	}
	/* every thread started from here blocks these: the main thread reads them from sfd */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	int sfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (sfd < 0) {
		fprintf(stderr, "bfi serve: %s\n", strerror(errno));
		return EXIT_USAGE;
	}
	serve_guard_install();
	/*
	 * What a large request leaves goes back to the system: blocks of 4 MiB
	 * or more are mapped and unmapped, and a heap keeps at most 4 MiB free
	 * at its top. glibc's default raises both bounds (to 32 and 64 MiB) as
	 * large blocks are freed, and a worker thread's heap then holds what
	 * its largest request took; below 4 MiB, where a large reply of every
	 * day lies, they stay fast heap blocks. What is freed inside the heaps
	 * goes back too (malloc_trim, watch_loop).
	 */
	mallopt(M_MMAP_THRESHOLD, 4 << 20);
	mallopt(M_TRIM_THRESHOLD, 4 << 20);
	/* every PATH opened first: a server that cannot serve one never listens */
	struct watches ws;
	int status = watch_open(&sv, &ws) == 0 ? EXIT_OK : EXIT_USAGE;
	struct MHD_Daemon *d = NULL;
	if (status == EXIT_OK)
		d = http_start(&sv, &addr, (unsigned)threads, (unsigned)max_conn, quiet);
	if (status == EXIT_OK && d == NULL) {
		fprintf(stderr, "bfi serve: cannot listen on %s (in use, or not this host's?)\n", listen);
		status = EXIT_USAGE;
	}
	if (status == EXIT_OK) {
		char host[INET6_ADDRSTRLEN];
		if (addr.ss_family == AF_INET6)
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&addr)->sin6_addr, host, sizeof host);
		else
			inet_ntop(AF_INET, &((struct sockaddr_in *)&addr)->sin_addr, host, sizeof host);
		fprintf(stderr, addr.ss_family == AF_INET6 ? "bfi serve: listening on http://[%s]:%u/\n"
		                                           : "bfi serve: listening on http://%s:%u/\n",
		        host, http_port(d));
		atomic_store(&sv.ready, 1);
		watch_loop(&sv, sfd, &ws);
		if (!quiet)
			fprintf(stderr, "bfi serve: stopping: no new connections; finishing the requests "
			                "in flight\n");
		/* a request still running past --timeout is abandoned: the process ends without it */
		int stuck = http_stop(d);
		if (stuck > 0) {
			fprintf(stderr, "bfi serve: %d request%s still running past --timeout: abandoned\n",
			        stuck, stuck == 1 ? "" : "s");
			fflush(stderr);
			_exit(status);
		}
	}
	slots_close(&sv);
	for (size_t i = 0; i < sv.n_slots; i++)
		pthread_mutex_destroy(&sv.slots[i].mu);
	free(sv.slots);
	watch_close(&ws);
	close(sfd);
	serve_thread_done();
	return status;
}
