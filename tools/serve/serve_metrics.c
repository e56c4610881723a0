/*
 * serve_metrics.c - bfi serve's counters, and GET /metrics in the
 * Prometheus text format (version 0.0.4): requests by endpoint and code,
 * errors, a latency histogram per endpoint, queries and keys answered,
 * and each snapshot's generation, open time and bytes mapped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

/* the codes bfi serve answers with; the last counts any other */
static const int codes[N_CODES] = {200, 400, 404, 405, 413, 414, 500, 503, 504, 408, 429, 431, 0};
static const double bounds[N_BUCKETS] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                         0.01,   0.025,   0.05,   0.1,   0.25,   0.5,
                                         1,      2.5,     5,      10};

void metrics_count(struct metrics *m, enum endpoint e, int status, double seconds)
{
	int c = 0;
	while (c < N_CODES - 1 && codes[c] != status)
		c++;
	int b = 0;
	while (b < N_BUCKETS && seconds > bounds[b])
		b++;
	atomic_fetch_add_explicit(&m->requests[e][c], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&m->buckets[e][b], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&m->micros[e], (unsigned long long)(seconds * 1e6),
	                          memory_order_relaxed);
}

/* A label value, escaped as the text format asks: \\, \" and \n. */
static void label(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', f);
		if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

char *metrics_page(struct server *sv, const char *(*endpoint_name)(enum endpoint), size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	if (f == NULL)
		return NULL;
	struct metrics *m = &sv->m;
	fputs("# HELP bfi_requests_total HTTP requests answered, by endpoint and status code.\n"
	      "# TYPE bfi_requests_total counter\n", f);
	for (int e = 0; e < N_ENDPOINTS; e++)
		for (int c = 0; c < N_CODES; c++) {
			unsigned long long n = atomic_load(&m->requests[e][c]);
			if (n || (c == 0 && e != EP_OTHER)) {
				if (codes[c])
					fprintf(f, "bfi_requests_total{endpoint=\"%s\",code=\"%d\"} %llu\n",
					        endpoint_name((enum endpoint)e), codes[c], n);
				else
					fprintf(f, "bfi_requests_total{endpoint=\"%s\",code=\"other\"} %llu\n",
					        endpoint_name((enum endpoint)e), n);
			}
		}
	fputs("# HELP bfi_request_errors_total Requests answered with a status of 400 or more.\n"
	      "# TYPE bfi_request_errors_total counter\n", f);
	for (int e = 0; e < N_ENDPOINTS; e++) {
		unsigned long long n = 0;
		for (int c = 1; c < N_CODES; c++)
			n += atomic_load(&m->requests[e][c]);
		fprintf(f, "bfi_request_errors_total{endpoint=\"%s\"} %llu\n", endpoint_name((enum endpoint)e), n);
	}
	fputs("# HELP bfi_request_duration_seconds Time from a request's arrival to its answer.\n"
	      "# TYPE bfi_request_duration_seconds histogram\n", f);
	for (int e = 0; e < N_ENDPOINTS; e++) {
		unsigned long long sum = 0;
		for (int b = 0; b <= N_BUCKETS; b++) {
			sum += atomic_load(&m->buckets[e][b]);
			if (b < N_BUCKETS)
				fprintf(f, "bfi_request_duration_seconds_bucket{endpoint=\"%s\",le=\"%g\"} %llu\n",
				        endpoint_name((enum endpoint)e), bounds[b], sum);
			else
				fprintf(f, "bfi_request_duration_seconds_bucket{endpoint=\"%s\",le=\"+Inf\"} %llu\n",
				        endpoint_name((enum endpoint)e), sum);
		}
		fprintf(f, "bfi_request_duration_seconds_sum{endpoint=\"%s\"} %.6f\n", endpoint_name((enum endpoint)e),
		        (double)atomic_load(&m->micros[e]) / 1e6);
		fprintf(f, "bfi_request_duration_seconds_count{endpoint=\"%s\"} %llu\n",
		        endpoint_name((enum endpoint)e), sum);
	}
	fprintf(f, "# HELP bfi_queries_total Queries answered.\n# TYPE bfi_queries_total counter\n"
	           "bfi_queries_total %llu\n",
	        (unsigned long long)atomic_load(&m->queries));
	fprintf(f, "# HELP bfi_keys_total Keys (a query's terms) looked up.\n"
	           "# TYPE bfi_keys_total counter\nbfi_keys_total %llu\n",
	        (unsigned long long)atomic_load(&m->keys));
	fprintf(f, "# HELP bfi_reply_bytes_held Bytes of replies made and not yet taken by their "
	           "clients (--reply-memory bounds it).\n# TYPE bfi_reply_bytes_held gauge\n"
	           "bfi_reply_bytes_held %lld\n",
	        (long long)atomic_load(&m->held));
	fprintf(f, "# HELP bfi_connections_cut_total Connections cut for sending a request, or "
	           "taking its reply, for longer than --timeout.\n"
	           "# TYPE bfi_connections_cut_total counter\nbfi_connections_cut_total %llu\n",
	        (unsigned long long)atomic_load(&m->cut));
	fprintf(f, "# HELP bfi_snapshot_faults_total Reads of a mapped file that had shrunk (SIGBUS), "
	           "caught: the request got 503.\n# TYPE bfi_snapshot_faults_total counter\n"
	           "bfi_snapshot_faults_total %llu\n",
	        (unsigned long long)atomic_load(&m->faults));
	fprintf(f, "# HELP bfi_mapped_bytes Bytes of snapshot files mapped, old generations still "
	           "in use included.\n# TYPE bfi_mapped_bytes gauge\nbfi_mapped_bytes %lld\n",
	        (long long)atomic_load(&m->mapped));
	static const char *const gauges[][3] = {
	    {"bfi_snapshot_generation", "gauge", "The generation served: a collection's manifest "
	                                         "generation, or a snapshot's opens."},
	    {"bfi_snapshot_open_time_seconds", "gauge", "When the generation served was opened, "
	                                                "in Unix time."},
	    {"bfi_snapshot_mapped_bytes", "gauge", "Bytes of the generation served."},
	    {"bfi_snapshot_reload_failures_total", "counter", "New generations that failed to "
	                                                      "open; the old one went on serving."},
	    {"bfi_snapshot_changed_total", "counter", "Generations found changed in place: their "
	                                              "requests got 503."}};
	for (size_t k = 0; k < sizeof gauges / sizeof *gauges; k++) {
		fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", gauges[k][0], gauges[k][2], gauges[k][0],
		        gauges[k][1]);
		for (size_t i = 0; i < sv->n_slots; i++) {
			struct slot *sl = &sv->slots[i];
			struct gen *g = gen_acquire(sl);
			if (g == NULL && k < 3)
				continue;
			if (k == 4) {
				fprintf(f, "%s{snapshot=\"", gauges[k][0]);
				label(f, sl->name);
				fprintf(f, "\"} %llu\n", (unsigned long long)atomic_load(&sl->changed));
				gen_release(sv, g);
				continue;
			}
			fprintf(f, "%s{snapshot=\"", gauges[k][0]);
			label(f, sl->name);
			fputs("\"} ", f);
			if (k == 0)
				fprintf(f, "%llu\n", (unsigned long long)g->generation);
			else if (k == 1)
				fprintf(f, "%.3f\n", g->opened);
			else if (k == 2)
				fprintf(f, "%llu\n", (unsigned long long)g->mapped);
			else
				fprintf(f, "%llu\n", (unsigned long long)atomic_load(&sl->reload_failures));
			gen_release(sv, g);
		}
	}
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}
