/*
 * inspect_html.c - bfi inspect --html: one self-contained page of inline
 * SVG that shows what a snapshot holds, for someone who has never seen the
 * format: the bytes by section, every set's fill ratio as a heat map in
 * ordinal order with the flat blocks beneath, the fill histogram, the
 * tree's levels, RAMBO's cell loads against the mean, and, with --probe N,
 * the false-positive rate measured on N random absent keys beside the one
 * the Bloom formula and RAMBO's Lemma 4.1 expect.
 *
 * Every figure drawn comes from the library's calls, the same bfi inspect
 * makes (facts.c for what both compute), never from its printed text; the
 * page embeds bfi inspect --json's object for the reader, and each drawn
 * element carries its numbers in data- attributes, so a test can hold the
 * picture to the JSON.
 * Nothing is fetched: no script, no stylesheet or font from elsewhere.
 */
#include <errno.h>
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

static void section_bytes(const bfi_snapshot *s, const struct bfi_info *in)
{
	uint64_t file_size = in->file_size;
	static const char *const shades[] = {"#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2",
	                                     "#b279a2"};
	fputs("<h2>Bytes by section</h2>\n<p>Where the bytes of index.bfi go: each section is one "
	      "layout of the same filters (or the chunk checksums that bfi verify reads); the rest is "
	      "the header, the section table and padding.</p>\n",
	      o);
	fputs("<svg class=\"sections\" width=\"900\" height=\"60\" role=\"img\">\n", o);
	double x = 0, scale = file_size ? 880.0 / (double)file_size : 0;
	for (uint32_t i = 0; i < in->n_sections; i++) {
		struct bfi_section_info si;
		if (bfi_section(s, i, &si))
			continue;
		const char *kind = bfi_section_kind_name(si.kind);
		double w = (double)si.size * scale;
		fprintf(o, "<rect data-kind=\"%s\" data-bytes=\"%llu\" x=\"%.1f\" y=\"5\" width=\"%.1f\" "
		        "height=\"30\" fill=\"%s\"><title>%s: %llu bytes</title></rect>\n",
		        kind, (unsigned long long)si.size, 10 + x, w < 1 ? 1 : w, shades[i % 6], kind,
		        (unsigned long long)si.size);
		if (w > 60)
			fprintf(o, "<text x=\"%.1f\" y=\"52\" font-size=\"11\">%s</text>\n", 10 + x, kind);
		x += w;
	}
	fputs("</svg>\n<table><tr><th>section</th><th>bytes</th><th>share of the file</th></tr>\n", o);
	for (uint32_t i = 0; i < in->n_sections; i++) {
		struct bfi_section_info si;
		if (bfi_section(s, i, &si))
			continue;
		fprintf(o, "<tr><td>%s</td><td>%llu</td><td>%.1f%%</td></tr>\n",
		        bfi_section_kind_name(si.kind), (unsigned long long)si.size,
		        file_size ? 100.0 * (double)si.size / (double)file_size : 0);
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
static void blocks(const bfi_snapshot *s, const struct bfi_info *in, const double *fill)
{
	struct bfi_layout_info li;
	if (in->segments || bfi_layout_info(s, BFI_LAYOUT_FLAT, &li) != 0 || li.u.flat.blocks == 0)
		return;
	uint32_t n = li.u.flat.blocks;
	fputs("<h2>Flat blocks</h2>\n<p>The flat layout (Flat-Bloofi) stores the filters bit-sliced: "
	      "row r of a block holds bit r of every set's filter, so a key's k probes read k rows and "
	      "AND them, whatever the number of sets. Sets are cut into blocks of one width each, "
	      "wide enough for the largest set in it; a union pre-filter lets a query skip a block.</p>\n"
	      "<svg class=\"blocks\" width=\"900\" height=\"40\" role=\"img\">\n",
	      o);
	double scale = in->n_sets ? 880.0 / (double)in->n_sets : 0;
	for (uint32_t b = 0; b < n; b++) {
		struct bfi_block_info bi;
		if (bfi_block(s, b, &bi))
			continue;
		double sum = 0;
		for (uint64_t ord = bi.first_set; ord < bi.first_set + bi.n_sets && ord < in->ordinals; ord++)
			sum += fill[ord];
		double f = bi.n_sets ? sum / (double)bi.n_sets : 0;
		fprintf(o, "<rect class=\"block\" data-block=\"%u\" data-first=\"%llu\" data-sets=\"%llu\" "
		        "data-bits=\"%llu\" data-mean-fill=\"%.6f\" x=\"%.1f\" y=\"5\" width=\"%.1f\" "
		        "height=\"25\" stroke=\"#333\" fill=\"",
		        b, (unsigned long long)bi.first_set, (unsigned long long)bi.n_sets,
		        (unsigned long long)bi.bits, f, 10 + (double)bi.first_set * scale,
		        (double)bi.n_sets * scale);
		colour(f);
		fprintf(o, "\"><title>block %u: sets %llu-%llu, m = %llu bits, mean fill %.4f</title>"
		        "</rect>\n",
		        b, (unsigned long long)bi.first_set,
		        (unsigned long long)(bi.first_set + bi.n_sets - 1), (unsigned long long)bi.bits, f);
	}
	fputs("</svg>\n<table><tr><th>block</th><th>sets</th><th>m bits</th><th>row bits</th>"
	      "<th>pre-filter bits</th></tr>\n",
	      o);
	for (uint32_t b = 0; b < n; b++) {
		struct bfi_block_info bi;
		if (bfi_block(s, b, &bi))
			continue;
		fprintf(o, "<tr><td>%u</td><td>%llu</td><td>%llu</td><td>%llu</td><td>%llu</td></tr>\n", b,
		        (unsigned long long)bi.n_sets, (unsigned long long)bi.bits,
		        (unsigned long long)bi.row_bits, (unsigned long long)bi.prefilter_bits);
	}
	fputs("</table>\n", o);
}

static void histogram(const struct fill *fs)
{
	uint64_t top = 1;
	for (int i = 0; i < BUCKETS; i++)
		top = fs->hist[i] > top ? fs->hist[i] : top;
	fputs("<h2>How full the filters are</h2>\n<p>Sets by fill ratio. A filter sized for its "
	      "keys at the target rate is about half full; emptier ones were sized for more keys "
	      "than they hold.</p>\n<svg class=\"histogram\" width=\"600\" height=\"170\" role=\"img\">\n",
	      o);
	for (int i = 0; i < BUCKETS; i++) {
		double from = (double)i / BUCKETS, to = (double)(i + 1) / BUCKETS;
		double hgt = 130.0 * (double)fs->hist[i] / (double)top;
		fprintf(o, "<rect class=\"bucket\" data-from=\"%.1f\" data-to=\"%.1f\" data-sets=\"%llu\" "
		        "x=\"%d\" y=\"%.1f\" width=\"50\" height=\"%.1f\" fill=\"",
		        from, to, (unsigned long long)fs->hist[i], 20 + i * 56, 140 - hgt, hgt);
		colour(from + 0.05);
		fprintf(o, "\"><title>%.1f-%.1f: %llu sets</title></rect>\n<text x=\"%d\" y=\"160\" "
		        "font-size=\"11\">%.1f</text>\n",
		        from, to, (unsigned long long)fs->hist[i], 20 + i * 56, from);
	}
	fputs("</svg>\n", o);
}

static void tree(const bfi_snapshot *s)
{
	struct bfi_layout_info li;
	if (bfi_layout_info(s, BFI_LAYOUT_TREE, &li) != 0 || li.u.tree.levels == 0)
		return;
	uint32_t n = li.u.tree.levels;
	fprintf(o, "<h2>Tree (Bloofi)</h2>\n<p>Level 0 holds the sets' filters; each node above is "
	        "the OR of up to %u children, so a query descends only into nodes whose filter "
	        "passes. A level is worth its bytes while its nodes are empty enough to prune: the "
	        "expected false-positive rate of a node, (fill)<sup>k</sup>, is the chance it "
	        "fails to.</p>\n<svg class=\"tree\" width=\"900\" height=\"%u\" role=\"img\">\n",
	        li.u.tree.fanout, 30 * n + 20);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t nodes, m;
		double f, p;
		if (bfi_tree_level(s, i, &nodes, &m, &f, &p) != 0)
			continue;
		uint32_t y = 10 + 30 * (n - 1 - i);
		fprintf(o, "<g class=\"level\" data-level=\"%u\" data-nodes=\"%llu\" data-bits=\"%llu\" "
		        "data-fill=\"%.6f\" data-expected-fpr=\"%.6g\">",
		        i, (unsigned long long)nodes, (unsigned long long)m, f, p);
		fprintf(o, "<text x=\"5\" y=\"%u\" font-size=\"12\">level %u: %llu nodes, m = %llu</text>",
		        y + 15, i, (unsigned long long)nodes, (unsigned long long)m);
		fprintf(o, "<rect x=\"260\" y=\"%u\" width=\"%.1f\" height=\"20\" fill=\"", y, 300 * f);
		colour(f);
		fprintf(o, "\"/><text x=\"%.1f\" y=\"%u\" font-size=\"12\">fill %.3f, expected FPR "
		        "%.3g</text></g>\n",
		        270 + 300 * f, y + 15, f, p);
	}
	fputs("</svg>\n", o);
}

/* RAMBO: each repetition's cells, how many sets each merges, against the mean N / B. */
static int rambo(const bfi_snapshot *s, const struct bfi_info *in)
{
	struct bfi_layout_info li;
	if (in->segments || bfi_layout_info(s, BFI_LAYOUT_RAMBO, &li) != 0)
		return 0;
	int rc = 0;
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
	uint32_t drawn = li.u.rambo.reps < MAX_REPS_DRAWN ? li.u.rambo.reps : MAX_REPS_DRAWN;
	double w = B ? 880.0 / (double)B : 0;
	for (uint32_t rep = 0; rep < drawn && rc == 0; rep++) {
		uint64_t m;
		rc = bfi_rambo_rep(s, rep, &m, cells);
		if (rc)
			break;
		uint64_t least = UINT64_MAX, most = 0;
		for (uint64_t c = 0; c < B; c++) {
			least = cells[c].sets < least ? cells[c].sets : least;
			most = cells[c].sets > most ? cells[c].sets : most;
		}
		uint64_t top = most > 1 ? most : 1; /* the bars' scale */
		fprintf(o, "<svg class=\"rambo-rep\" data-rep=\"%u\" data-min=\"%llu\" data-mean=\"%.2f\" "
		        "data-max=\"%llu\" width=\"900\" height=\"100\" role=\"img\">\n"
		        "<text x=\"10\" y=\"12\" font-size=\"12\">repetition %u: sets per cell, min %llu, "
		        "mean %.2f, max %llu</text>\n",
		        rep, (unsigned long long)least, mean, (unsigned long long)most, rep,
		        (unsigned long long)least, mean, (unsigned long long)most);
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
 * Expected against measured false positives on probes random keys, on each
 * layout: the share of (key, set) pairs answered. Expected: the mean over
 * sets of (fill)^k for flat, tree and plain (a set answers when its own
 * filter passes); for RAMBO from each set's cells: the library's model
 * (bfi_layout_fpr), with
 * Lemma 4.1's cell_fpr^R (V = 0) beside it.
 */
static int probe(const bfi_snapshot *s, const struct bfi_info *in, uint64_t probes)
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
		/* the library's model: (fill)^k of each set's filter, or of its RAMBO cells */
		struct bfi_fpr_model fm;
		double lemma = -1;
		rc = bfi_layout_fpr(s, flag, &fm);
		if (rc == 0 && flag == BFI_LAYOUT_RAMBO) {
			struct bfi_layout_info li;
			rc = bfi_layout_info(s, BFI_LAYOUT_RAMBO, &li);
			lemma = pow(fm.cell, li.u.rambo.reps);
		}
		if (rc)
			break;
		double expected = fm.expected;
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
	int named = 0;
	for (unsigned flag = 1; flag; flag <<= 1)
		if ((in.layouts & flag) && bfi_layout_name(flag)) {
			struct bfi_layout_param p[16];
			char params[1024];
			int np = bfi_layout_params(s, flag, p, sizeof p / sizeof *p);
			fprintf(o, "%s%s", named++ ? ", " : "", bfi_layout_name(flag));
			layout_params_text(p, np < 16 ? np : 16, ", ", params, sizeof params);
			if (params[0])
				fprintf(o, " (%s)", params); /* names and numbers: nothing to escape */
		}
	fprintf(o, ". index.bfi is %llu bytes, catalog.mdb %llu.", (unsigned long long)in.file_size,
	        (unsigned long long)in.catalog_size);
	if (in.segments)
		fprintf(o, " A collection: %u segments, generation %llu.", in.segments,
		        (unsigned long long)in.generation);
	fputs("</p>\n", o);
	section_bytes(s, &in);
	double *fill = malloc((in.ordinals ? in.ordinals : 1) * sizeof *fill);
	struct fill fs;
	rc = fill ? set_fills(s, &in, fill) : -ENOMEM;
	if (rc == 0)
		rc = fill_stats(s, &in, &fs);
	if (rc == 0) {
		heat_map(s, &in, fill);
		blocks(s, &in, fill);
		histogram(&fs);
		tree(s);
		rc = rambo(s, &in);
	}
	if (rc == 0)
		rc = probe(s, &in, probes);
	if (rc == 0) {
		fputs("<h2>The numbers</h2>\n<p>What bfi inspect --json says of the same snapshot, "
		      "from the same library calls:</p>\n",
		      o);
		embed(buf, len);
		fputs("<pre>", o);
		html(buf, len);
		fputs("</pre>\n</body>\n</html>\n", o);
	}
	free(fill);
	free(buf);
	if (rc)
		return rc;
	return ferror(o) ? 1 : 0;
}
