/*
 * inspect_html.c - bfi inspect --html: one self-contained page of inline
 * SVG that shows what a snapshot holds, for someone who has never seen the
 * format: the bytes by section, every set's fill ratio as a heat map in
 * ordinal order with the flat blocks beneath, the fill histogram, the
 * tree's levels, RAMBO's cell loads against the mean, and, with --probe N,
 * the false-positive rate measured on N random absent keys beside the one
 * the Bloom formula and RAMBO's Lemma 4.1 expect.
 *
 * Every figure drawn comes from bfi inspect --json's object (parsed back
 * with json-c, and embedded in the page whole) or from the same library
 * calls bfi inspect --sets makes, and each drawn element carries its
 * numbers in data- attributes, so a test can hold the picture to the JSON.
 * Nothing is fetched: no script, no stylesheet or font from elsewhere.
 */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inspect.h"
#include "tools.h"

#define MAX_CELLS 4096 /* heat-map cells: more sets than this are shown in bins */
#define CELL 10        /* px */
#define COLS 64
#define MAX_REPS_DRAWN 8
#define PLAIN_PROBES 1000 /* plain reads every filter a key: fewer probes there */

static FILE *o;

/* Text as HTML: &, <, >, " and ' escaped; other bytes as they are. */
static void html(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		switch (s[i]) {
		case '&': fputs("&amp;", o); break;
		case '<': fputs("&lt;", o); break;
		case '>': fputs("&gt;", o); break;
		case '"': fputs("&quot;", o); break;
		case '\'': fputs("&#39;", o); break;
		default: fputc(s[i], o);
		}
	}
}

static void html_s(const char *s)
{
	html(s, strlen(s));
}

/* A fill ratio in [0, 1] as a colour: light (empty) to dark blue (full). */
static void colour(double f)
{
	if (!(f >= 0))
		f = 0;
	if (f > 1)
		f = 1;
	fprintf(o, "hsl(215,70%%,%.0f%%)", 96 - 70 * f);
}

static json_object *get(json_object *j, const char *k)
{
	json_object *v = NULL;
	return j && json_object_object_get_ex(j, k, &v) ? v : NULL;
}

static double num(json_object *j, const char *k)
{
	json_object *v = get(j, k);
	return v ? json_object_get_double(v) : 0;
}

static void section_bytes(json_object *js, uint64_t file_size)
{
	json_object *secs = get(js, "sections");
	size_t n = secs ? json_object_array_length(secs) : 0;
	static const char *const shades[] = {"#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2",
	                                     "#b279a2"};
	fputs("<h2>Bytes by section</h2>\n<p>Where the bytes of index.bfi go: each section is one "
	      "layout of the same filters (or the chunk checksums that bfi verify reads); the rest is "
	      "the header, the section table and padding.</p>\n",
	      o);
	fputs("<svg class=\"sections\" width=\"900\" height=\"60\" role=\"img\">\n", o);
	double x = 0, scale = file_size ? 880.0 / (double)file_size : 0;
	for (size_t i = 0; i < n; i++) {
		json_object *s = json_object_array_get_idx(secs, i);
		const char *kind = json_object_get_string(get(s, "kind"));
		uint64_t bytes = (uint64_t)json_object_get_int64(get(s, "size"));
		double w = (double)bytes * scale;
		fprintf(o, "<rect data-kind=\"%s\" data-bytes=\"%llu\" x=\"%.1f\" y=\"5\" width=\"%.1f\" "
		        "height=\"30\" fill=\"%s\"><title>%s: %llu bytes</title></rect>\n",
		        kind, (unsigned long long)bytes, 10 + x, w < 1 ? 1 : w, shades[i % 6], kind,
		        (unsigned long long)bytes);
		if (w > 60)
			fprintf(o, "<text x=\"%.1f\" y=\"52\" font-size=\"11\">%s</text>\n", 10 + x, kind);
		x += w;
	}
	fputs("</svg>\n<table><tr><th>section</th><th>bytes</th><th>share of the file</th></tr>\n", o);
	for (size_t i = 0; i < n; i++) {
		json_object *s = json_object_array_get_idx(secs, i);
		uint64_t bytes = (uint64_t)json_object_get_int64(get(s, "size"));
		fprintf(o, "<tr><td>%s</td><td>%llu</td><td>%.1f%%</td></tr>\n",
		        json_object_get_string(get(s, "kind")), (unsigned long long)bytes,
		        file_size ? 100.0 * (double)bytes / (double)file_size : 0);
	}
	fputs("</table>\n", o);
}

/*
 * Every ordinal's fill ratio (bits set / bits) in fill[], NaN for a removed
 * set's hole: what the heat map and the blocks draw, read once.
 */
static int set_fills(const bfi_snapshot *s, const struct bfi_info *in, double *fill)
{
	for (uint64_t ord = 0; ord < in->ordinals; ord++) {
		struct bfi_set_stats st;
		int e = bfi_set_stats(s, (uint32_t)ord, &st);
		if (e == BFI_E_NOT_FOUND && in->segments) {
			fill[ord] = NAN;
			continue;
		}
		if (e)
			return e;
		fill[ord] = st.bits ? (double)st.bits_set / (double)st.bits : 0;
	}
	return 0;
}

/* Every set's fill ratio, in ordinal order, 64 a row; bins of sets past MAX_CELLS. */
static void heat_map(const bfi_snapshot *s, const struct bfi_info *in, const double *fill)
{
	uint64_t n = in->ordinals, per = (n + MAX_CELLS - 1) / MAX_CELLS;
	if (per == 0)
		per = 1;
	uint64_t cells = (n + per - 1) / per, rows = (cells + COLS - 1) / COLS;
	fputs("<h2>Fill ratio of every set</h2>\n<p>A set's filter is a row of m bits; its fill "
	      "ratio is the share of them set to one. A key that is not in the set passes all k "
	      "probes with probability (fill)<sup>k</sup>, so dark cells are the sets most likely to "
	      "answer falsely. Sets are in ordinal order, the order of the index, 64 a row",
	      o);
	if (per > 1)
		fprintf(o, "; each cell is the mean of %llu sets in a row", (unsigned long long)per);
	fputs(".</p>\n", o);
	fprintf(o, "<svg class=\"heat\" width=\"%d\" height=\"%llu\" role=\"img\">\n",
	        COLS * CELL + 20, (unsigned long long)(rows * CELL + 10));
	for (uint64_t c = 0; c < cells; c++) {
		uint64_t first = c * per, last = first + per > n ? n : first + per;
		double sum = 0;
		uint64_t live = 0;
		for (uint64_t ord = first; ord < last; ord++) {
			if (isnan(fill[ord]))
				continue; /* a removed set's hole */
			sum += fill[ord];
			live++;
		}
		const char *name = NULL;
		size_t nl = 0;
		if (per == 1 && live && bfi_set_name(s, (uint32_t)first, &name, &nl) != 0)
			name = NULL;
		uint64_t x = 10 + (c % COLS) * CELL, y = 5 + (c / COLS) * CELL;
		if (live == 0) {
			fprintf(o, "<rect class=\"hole\" x=\"%llu\" y=\"%llu\" width=\"%d\" height=\"%d\" "
			        "fill=\"#ddd\"/>\n",
			        (unsigned long long)x, (unsigned long long)y, CELL - 1, CELL - 1);
			continue;
		}
		double f = sum / (double)live;
		if (per == 1)
			fprintf(o, "<rect class=\"set\" data-ordinal=\"%llu\" data-fill=\"%.6f\"",
			        (unsigned long long)first, f);
		else
			fprintf(o, "<rect class=\"bin\" data-first=\"%llu\" data-last=\"%llu\" "
			        "data-fill=\"%.6f\"",
			        (unsigned long long)first, (unsigned long long)(last - 1), f);
		fprintf(o, " x=\"%llu\" y=\"%llu\" width=\"%d\" height=\"%d\" fill=\"",
		        (unsigned long long)x, (unsigned long long)y, CELL - 1, CELL - 1);
		colour(f);
		fputs("\"><title>", o);
		if (name)
			html(name, nl);
		else
			fprintf(o, "sets %llu-%llu", (unsigned long long)first, (unsigned long long)last - 1);
		fprintf(o, ": fill %.4f</title></rect>\n", f);
	}
	fputs("</svg>\n<p class=\"legend\">fill 0 ", o);
	for (int i = 0; i <= 10; i++) {
		fputs("<span style=\"background:", o);
		colour(i / 10.0);
		fputs("\">&nbsp;&nbsp;&nbsp;</span>", o);
	}
	fputs(" 1</p>\n", o);
}

/* The flat layout's blocks: sets, width and mean fill of each. */
static void blocks(const struct bfi_info *in, json_object *js, const double *fill)
{
	json_object *bl = get(js, "blocks");
	size_t n = bl ? json_object_array_length(bl) : 0;
	if (n == 0 || in->segments)
		return;
	fputs("<h2>Flat blocks</h2>\n<p>The flat layout (Flat-Bloofi) stores the filters bit-sliced: "
	      "row r of a block holds bit r of every set's filter, so a key's k probes read k rows and "
	      "AND them, whatever the number of sets. Sets are cut into blocks of one width each, "
	      "wide enough for the largest set in it; a union pre-filter lets a query skip a block.</p>\n"
	      "<svg class=\"blocks\" width=\"900\" height=\"40\" role=\"img\">\n",
	      o);
	double scale = in->n_sets ? 880.0 / (double)in->n_sets : 0;
	for (size_t b = 0; b < n; b++) {
		json_object *e = json_object_array_get_idx(bl, b);
		uint64_t first = (uint64_t)json_object_get_int64(get(e, "first_set"));
		uint64_t sets = (uint64_t)json_object_get_int64(get(e, "sets"));
		double sum = 0;
		for (uint64_t ord = first; ord < first + sets && ord < in->ordinals; ord++)
			sum += fill[ord];
		double f = sets ? sum / (double)sets : 0;
		fprintf(o, "<rect class=\"block\" data-block=\"%zu\" data-first=\"%llu\" data-sets=\"%llu\" "
		        "data-bits=\"%llu\" data-mean-fill=\"%.6f\" x=\"%.1f\" y=\"5\" width=\"%.1f\" "
		        "height=\"25\" stroke=\"#333\" fill=\"",
		        b, (unsigned long long)first, (unsigned long long)sets,
		        (unsigned long long)json_object_get_int64(get(e, "bits")), f,
		        10 + (double)first * scale, (double)sets * scale);
		colour(f);
		fprintf(o, "\"><title>block %zu: sets %llu-%llu, m = %llu bits, mean fill %.4f</title>"
		        "</rect>\n",
		        b, (unsigned long long)first, (unsigned long long)(first + sets - 1),
		        (unsigned long long)json_object_get_int64(get(e, "bits")), f);
	}
	fputs("</svg>\n<table><tr><th>block</th><th>sets</th><th>m bits</th><th>row bits</th>"
	      "<th>pre-filter bits</th></tr>\n",
	      o);
	for (size_t b = 0; b < n; b++) {
		json_object *e = json_object_array_get_idx(bl, b);
		fprintf(o, "<tr><td>%zu</td><td>%lld</td><td>%lld</td><td>%lld</td><td>%lld</td></tr>\n", b,
		        (long long)json_object_get_int64(get(e, "sets")),
		        (long long)json_object_get_int64(get(e, "bits")),
		        (long long)json_object_get_int64(get(e, "row_bits")),
		        (long long)json_object_get_int64(get(e, "prefilter_bits")));
	}
	fputs("</table>\n", o);
}

static void histogram(json_object *js)
{
	json_object *h = get(get(js, "fill"), "histogram");
	size_t n = h ? json_object_array_length(h) : 0;
	int64_t top = 1;
	for (size_t i = 0; i < n; i++) {
		int64_t v = json_object_get_int64(get(json_object_array_get_idx(h, i), "sets"));
		top = v > top ? v : top;
	}
	fputs("<h2>How full the filters are</h2>\n<p>Sets by fill ratio. A filter sized for its "
	      "keys at the target rate is about half full; emptier ones were sized for more keys "
	      "than they hold.</p>\n<svg class=\"histogram\" width=\"600\" height=\"170\" role=\"img\">\n",
	      o);
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(h, i);
		int64_t v = json_object_get_int64(get(e, "sets"));
		double hgt = 130.0 * (double)v / (double)top;
		fprintf(o, "<rect class=\"bucket\" data-from=\"%.1f\" data-to=\"%.1f\" data-sets=\"%lld\" "
		        "x=\"%zu\" y=\"%.1f\" width=\"50\" height=\"%.1f\" fill=\"",
		        num(e, "from"), num(e, "to"), (long long)v, 20 + i * 56, 140 - hgt, hgt);
		colour(num(e, "from") + 0.05);
		fprintf(o, "\"><title>%.1f-%.1f: %lld sets</title></rect>\n<text x=\"%zu\" y=\"160\" "
		        "font-size=\"11\">%.1f</text>\n",
		        num(e, "from"), num(e, "to"), (long long)v, 20 + i * 56, num(e, "from"));
	}
	fputs("</svg>\n", o);
}

static void tree(json_object *js)
{
	json_object *t = get(js, "tree");
	json_object *lv = get(t, "levels");
	size_t n = lv ? json_object_array_length(lv) : 0;
	if (n == 0)
		return;
	fprintf(o, "<h2>Tree (Bloofi)</h2>\n<p>Level 0 holds the sets' filters; each node above is "
	        "the OR of up to %lld children, so a query descends only into nodes whose filter "
	        "passes. A level is worth its bytes while its nodes are empty enough to prune: the "
	        "expected false-positive rate of a node, (fill)<sup>k</sup>, is the chance it "
	        "fails to.</p>\n<svg class=\"tree\" width=\"900\" height=\"%zu\" role=\"img\">\n",
	        (long long)json_object_get_int64(get(t, "fanout")), 30 * n + 20);
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(lv, i);
		double f = num(e, "fill"), p = num(e, "expected_fpr");
		size_t y = 10 + 30 * (n - 1 - i);
		fprintf(o, "<g class=\"level\" data-level=\"%zu\" data-nodes=\"%lld\" data-bits=\"%lld\" "
		        "data-fill=\"%.6f\" data-expected-fpr=\"%.6g\">",
		        i, (long long)json_object_get_int64(get(e, "nodes")),
		        (long long)json_object_get_int64(get(e, "bits")), f, p);
		fprintf(o, "<text x=\"5\" y=\"%zu\" font-size=\"12\">level %zu: %lld nodes, m = %lld</text>",
		        y + 15, i, (long long)json_object_get_int64(get(e, "nodes")),
		        (long long)json_object_get_int64(get(e, "bits")));
		fprintf(o, "<rect x=\"260\" y=\"%zu\" width=\"%.1f\" height=\"20\" fill=\"", y, 300 * f);
		colour(f);
		fprintf(o, "\"/><text x=\"%.1f\" y=\"%zu\" font-size=\"12\">fill %.3f, expected FPR "
		        "%.3g</text></g>\n",
		        270 + 300 * f, y + 15, f, p);
	}
	fputs("</svg>\n", o);
}

/* RAMBO: each repetition's cells, how many sets each merges, against the mean N / B. */
static int rambo(const bfi_snapshot *s, const struct bfi_info *in, json_object *js)
{
	json_object *r = get(js, "rambo");
	if (r == NULL || in->segments)
		return 0;
	struct bfi_layout_info li;
	int rc = bfi_layout_info(s, BFI_LAYOUT_RAMBO, &li);
	if (rc)
		return rc;
	uint64_t B = li.u.rambo.cells;
	struct bfi_rambo_cell_info *cells = malloc((B ? B : 1) * sizeof *cells);
	if (cells == NULL)
		return -ENOMEM;
	double mean = (double)in->n_sets / (double)B;
	fprintf(o, "<h2>RAMBO</h2>\n<p>R = %u repetitions, each hashing every set into one of B = %llu "
	        "cells; a cell's filter is the OR of its sets' filters. A key is looked up in every "
	        "cell of each repetition, and a set answers when its cell passes in all R. Cells "
	        "that merge more sets than the mean (the line) fill faster and pass more often.</p>\n",
	        li.u.rambo.reps, (unsigned long long)B);
	json_object *reps = get(r, "repetitions");
	uint32_t drawn = li.u.rambo.reps < MAX_REPS_DRAWN ? li.u.rambo.reps : MAX_REPS_DRAWN;
	double w = B ? 880.0 / (double)B : 0;
	for (uint32_t rep = 0; rep < drawn && rc == 0; rep++) {
		uint64_t m;
		rc = bfi_rambo_rep(s, rep, &m, cells);
		if (rc)
			break;
		uint64_t top = 1;
		for (uint64_t c = 0; c < B; c++)
			top = cells[c].sets > top ? cells[c].sets : top;
		json_object *e = json_object_array_get_idx(reps, rep);
		json_object *spc = get(e, "sets_per_cell");
		fprintf(o, "<svg class=\"rambo-rep\" data-rep=\"%u\" data-min=\"%lld\" data-mean=\"%.2f\" "
		        "data-max=\"%lld\" width=\"900\" height=\"100\" role=\"img\">\n"
		        "<text x=\"10\" y=\"12\" font-size=\"12\">repetition %u: sets per cell, min %lld, "
		        "mean %.2f, max %lld</text>\n",
		        rep, (long long)json_object_get_int64(get(spc, "min")), num(spc, "mean"),
		        (long long)json_object_get_int64(get(spc, "max")), rep,
		        (long long)json_object_get_int64(get(spc, "min")), num(spc, "mean"),
		        (long long)json_object_get_int64(get(spc, "max")));
		for (uint64_t c = 0; c < B; c++) {
			double h = 70.0 * (double)cells[c].sets / (double)top;
			double f = m ? (double)cells[c].bits_set / (double)m : 0;
			fprintf(o, "<rect class=\"cell\" data-cell=\"%llu\" data-sets=\"%llu\" "
			        "data-fill=\"%.6f\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"",
			        (unsigned long long)c, (unsigned long long)cells[c].sets, f, 10 + c * w,
			        90 - h, w > 2 ? w - 1 : w, h);
			colour(f);
			fprintf(o, "\"><title>cell %llu: %llu sets, fill %.3f</title></rect>\n",
			        (unsigned long long)c, (unsigned long long)cells[c].sets, f);
		}
		double my = 90 - 70.0 * mean / (double)top;
		fprintf(o, "<line class=\"mean\" x1=\"10\" x2=\"890\" y1=\"%.1f\" y2=\"%.1f\" "
		        "stroke=\"#e45756\" stroke-width=\"1.5\"/>\n</svg>\n",
		        my, my);
	}
	if (li.u.rambo.reps > drawn)
		fprintf(o, "<p>(the first %u of %u repetitions)</p>\n", drawn, li.u.rambo.reps);
	free(cells);
	return rc;
}

/* A deterministic stream of keys no writer makes, so absent from every set. */
static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/*
 * RAMBO's expected rate for absent keys from its cells' own fills: a set
 * answers when its cell passes in every repetition, so the mean over sets
 * of the product over repetitions of (its cell's fill)^k. Lemma 4.1's
 * p^R is this when every set has one size; a large set fills every cell
 * it joins, which the product sees and p^R does not.
 */
static int rambo_expected(const bfi_snapshot *s, const struct bfi_info *in,
                          const struct bfi_layout_info *li, double *out)
{
	uint64_t B = li->u.rambo.cells;
	uint32_t R = li->u.rambo.reps;
	double *pass = malloc((size_t)(B * R > 0 ? B * R : 1) * sizeof *pass);
	struct bfi_rambo_cell_info *cells = malloc((B ? B : 1) * sizeof *cells);
	int rc = pass && cells ? 0 : -ENOMEM;
	for (uint32_t r = 0; r < R && rc == 0; r++) {
		uint64_t m;
		rc = bfi_rambo_rep(s, r, &m, cells);
		for (uint64_t c = 0; c < B && rc == 0; c++)
			pass[r * B + c] = pow(m ? (double)cells[c].bits_set / (double)m : 0, li->hashes);
	}
	double sum = 0;
	uint64_t live = 0;
	for (uint64_t ord = 0; ord < in->ordinals && rc == 0; ord++) {
		const char *name;
		size_t nl;
		int e = bfi_set_name(s, (uint32_t)ord, &name, &nl);
		if (e == BFI_E_NOT_FOUND && in->segments)
			continue;
		if (e) {
			rc = e;
			break;
		}
		double p = 1;
		for (uint32_t r = 0; r < R; r++)
			p *= pass[r * B + bfi_rambo_cell(name, nl, r, B, li->u.rambo.shards)];
		sum += p;
		live++;
	}
	*out = live ? sum / (double)live : 0;
	free(pass);
	free(cells);
	return rc;
}

/*
 * Expected against measured false positives on probes random keys, on each
 * layout: the share of (key, set) pairs answered. Expected: the mean over
 * sets of (fill)^k for flat, tree and plain (a set answers when its own
 * filter passes); for RAMBO from each set's cells (rambo_expected), with
 * Lemma 4.1's cell_fpr^R (V = 0) beside it.
 */
static int probe(const bfi_snapshot *s, const struct bfi_info *in, json_object *js,
                 uint64_t probes)
{
	if (probes == 0 || in->n_sets == 0)
		return 0;
	bfi_result *res = NULL;
	int rc = bfi_result_create(&res);
	if (rc)
		return rc;
	fprintf(o, "<h2>False positives: expected and measured</h2>\n<p>%llu random keys that no set "
	        "holds, asked of each layout. Every set that answers one is a false positive; the "
	        "share of (key, set) pairs that answered is the measured rate, beside the rate the "
	        "filters' fill predicts: the Bloom formula (fill)<sup>k</sup> averaged over the sets, "
	        "and for RAMBO Lemma 4.1 of its paper.</p>\n<table><tr><th>layout</th><th>keys "
	        "asked</th><th>false positives</th><th>measured rate</th><th>expected rate</th></tr>\n",
	        (unsigned long long)probes);
	for (unsigned l = 0, flag; (flag = bfi_layout_at(l)) != 0 && rc == 0; l++) {
		if (!(in->layouts & flag))
			continue;
		uint64_t n = flag == BFI_LAYOUT_PLAIN && probes > PLAIN_PROBES ? PLAIN_PROBES
		                                                                         : probes;
		uint64_t seed = 0x62666970726f6265ull, hits = 0;
		for (uint64_t i = 0; i < n && rc == 0; i++) {
			char key[40];
			int len = snprintf(key, sizeof key, "\x01probe-%016llx",
			                   (unsigned long long)splitmix(&seed));
			rc = bfi_query_key_layout(s, flag, key, (size_t)len, res);
			hits += bfi_result_count(res);
		}
		if (rc)
			break;
		double expected = num(get(js, "expected_fpr"), "mean"), lemma = -1;
		if (flag == BFI_LAYOUT_RAMBO) {
			struct bfi_layout_info li;
			rc = bfi_layout_info(s, BFI_LAYOUT_RAMBO, &li);
			if (rc == 0)
				rc = rambo_expected(s, in, &li, &expected);
			lemma = pow(num(get(js, "rambo"), "cell_fpr"), li.u.rambo.reps);
		}
		double measured = (double)hits / ((double)n * (double)in->n_sets);
		fprintf(o, "<tr class=\"probe\" data-layout=\"%s\" data-probes=\"%llu\" data-hits=\"%llu\" "
		        "data-measured=\"%.6g\" data-expected=\"%.6g\"",
		        bfi_layout_name(flag), (unsigned long long)n, (unsigned long long)hits, measured, expected);
		if (lemma >= 0)
			fprintf(o, " data-lemma=\"%.6g\"", lemma);
		fprintf(o, "><td>%s</td><td>%llu</td><td>%llu</td><td>%.3g</td><td>%.3g", bfi_layout_name(flag),
		        (unsigned long long)n, (unsigned long long)hits, measured, expected);
		if (lemma >= 0)
			fprintf(o, " (Lemma 4.1, sets of one size: %.3g)", lemma);
		fputs("</td></tr>\n", o);
	}
	fputs("</table>\n", o);
	bfi_result_destroy(&res);
	return rc;
}

/* The inspect JSON, in a script element no browser runs: "</" cannot end it. */
static void embed(const char *j, size_t n)
{
	fputs("<script type=\"application/json\" id=\"bfi-inspect\">", o);
	for (size_t i = 0; i < n; i++) {
		if (j[i] == '<')
			fputs("\\u003c", o);
		else
			fputc(j[i], o);
	}
	fputs("</script>\n", o);
}

int inspect_html(FILE *out, const bfi_snapshot *s, const char *path, uint64_t probes)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (m == NULL)
		return -errno;
	int rc = inspect_write(m, s, path, 1);
	if (fclose(m) != 0 && rc == 0)
		rc = -ENOMEM;
	if (rc) {
		free(buf);
		return rc > 0 ? -ENOMEM : rc;
	}
	json_object *js = json_tokener_parse(buf);
	if (js == NULL) {
		free(buf);
		return -EINVAL; /* inspect_write made it: never */
	}
	o = out;
	struct bfi_info in;
	bfi_info(s, &in);
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>bfi "
	      "inspect: ",
	      o);
	html_s(path);
	fputs("</title>\n<style>\nbody { font: 14px/1.45 sans-serif; max-width: 960px; margin: 2em auto; "
	      "color: #222; }\nh1 { font-size: 22px; } h2 { font-size: 17px; margin-top: 2em; }\n"
	      "table { border-collapse: collapse; } td, th { padding: 2px 10px; text-align: right; "
	      "border-bottom: 1px solid #ddd; } th { background: #f3f3f3; }\nsvg { display: block; "
	      "margin: 0.5em 0; }\n.legend span { display: inline-block; }\npre { white-space: pre-wrap; "
	      "word-break: break-all; font-size: 11px; color: #555; }\n</style>\n</head>\n<body>\n",
	      o);
	fputs("<h1>", o);
	html_s(path);
	fputs("</h1>\n<p>A bfi snapshot: Bloom filters of ", o);
	fprintf(o, "<b>%llu sets</b>, queried in place. Each filter answers \"may this set hold the "
	        "key?\" with no false negatives and a few false positives. Format %u.%u, k = %u hash "
	        "functions a key, the widest filter %llu bits; layouts: ",
	        (unsigned long long)in.n_sets, in.major, in.minor, in.hashes,
	        (unsigned long long)in.bits);
	json_object *lays = get(js, "layouts");
	for (size_t i = 0; lays && i < json_object_array_length(lays); i++)
		fprintf(o, "%s%s", i ? ", " : "",
		        json_object_get_string(json_object_array_get_idx(lays, i)));
	fprintf(o, ". index.bfi is %llu bytes, catalog.mdb %llu.", (unsigned long long)in.file_size,
	        (unsigned long long)in.catalog_size);
	if (in.segments)
		fprintf(o, " A collection: %u segments, generation %llu.", in.segments,
		        (unsigned long long)in.generation);
	fputs("</p>\n", o);
	section_bytes(js, in.file_size);
	double *fill = malloc((in.ordinals ? in.ordinals : 1) * sizeof *fill);
	rc = fill ? set_fills(s, &in, fill) : -ENOMEM;
	if (rc == 0) {
		heat_map(s, &in, fill);
		blocks(&in, js, fill);
		histogram(js);
		tree(js);
		rc = rambo(s, &in, js);
	}
	if (rc == 0)
		rc = probe(s, &in, js, probes);
	if (rc == 0) {
		fputs("<h2>The numbers</h2>\n<p>What bfi inspect --json says, from which this page is "
		      "drawn:</p>\n",
		      o);
		embed(buf, len);
		fputs("<pre>", o);
		html(buf, len);
		fputs("</pre>\n</body>\n</html>\n", o);
	}
	json_object_put(js);
	free(fill);
	free(buf);
	if (rc)
		return rc;
	return ferror(o) ? 1 : 0;
}
