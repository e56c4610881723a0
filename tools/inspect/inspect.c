/*
 * inspect.c - what a snapshot holds, as text or JSON (bfi inspect, and
 * bfi serve's GET /v1/NAME), written to a stream.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bfi.h"
#include "inspect.h"
#include "tools.h"

/* The stream being written: each thread writes its own. */
static _Thread_local FILE *os;

/*
 * RAMBO: B, R, S, and per repetition the filter width, cell sizes and fill;
 * then Lemma 4.1's rate for keys held by V sets, with p the library's mean
 * over sets of their cell's (fill)^k (bfi_layout_fpr):
 * F = (p (1 - 1/B)^V + 1 - (1 - 1/B)^V)^R.
 */
static int print_rambo(const bfi_snapshot *s, const struct bfi_info *in,
                       const struct bfi_layout_info *lr, int json)
{
	uint64_t B = lr->u.rambo.cells;
	struct bfi_rambo_cell_info *cells = malloc(B * sizeof *cells);
	if (cells == NULL)
		return -12;
	int rc = 0;
	if (json)
		fprintf(os, ", \"%s\": {\"cells\": %llu, \"reps\": %u, \"shards\": %u, \"repetitions\": [",
		       bfi_layout_name(lr->layout), (unsigned long long)B, lr->u.rambo.reps, lr->u.rambo.shards);
	else
		fprintf(os, "%-12s B = %llu cells, R = %u repetitions, %u shard%s\n"
		       "             rep  m bits      sets per cell (min/mean/max)  fill (min/mean/max)\n",
		       bfi_layout_name(lr->layout), (unsigned long long)B, lr->u.rambo.reps, lr->u.rambo.shards,
		       lr->u.rambo.shards == 1 ? "" : "s");
	for (uint32_t r = 0; r < lr->u.rambo.reps && rc == 0; r++) {
		uint64_t m;
		rc = bfi_rambo_rep(s, r, &m, cells);
		if (rc)
			break;
		uint64_t smin = UINT64_MAX, smax = 0;
		double fmin = 1, fmax = 0, fsum = 0;
		for (uint64_t c = 0; c < B; c++) {
			double f = (double)cells[c].bits_set / (double)m;
			smin = cells[c].sets < smin ? cells[c].sets : smin;
			smax = cells[c].sets > smax ? cells[c].sets : smax;
			fmin = f < fmin ? f : fmin;
			fmax = f > fmax ? f : fmax;
			fsum += f;
		}
		if (json)
			fprintf(os, "%s{\"bits\": %llu, \"sets_per_cell\": {\"min\": %llu, \"mean\": %.2f, "
			       "\"max\": %llu}, \"fill\": {\"min\": %.4f, \"mean\": %.4f, \"max\": %.4f}}",
			       r ? ", " : "", (unsigned long long)m, (unsigned long long)smin,
			       (double)in->n_sets / (double)B, (unsigned long long)smax, fmin, fsum / (double)B,
			       fmax);
		else
			fprintf(os, "             %-4u %-11llu %llu / %.1f / %llu%*s %.4f / %.4f / %.4f\n", r,
			       (unsigned long long)m, (unsigned long long)smin,
			       (double)in->n_sets / (double)B, (unsigned long long)smax, 10, "", fmin,
			       fsum / (double)B, fmax);
	}
	struct bfi_fpr_model fm; /* Lemma 4.1's p: the library's model of the cells as filled */
	if (rc == 0)
		rc = bfi_layout_fpr(s, BFI_LAYOUT_RAMBO, &fm);
	if (rc == 0) {
		double p = fm.cell;
		static const int vs[] = {1, 2, 5, 10};
		if (json)
			fprintf(os, "], \"cell_fpr\": %.6g, \"lemma_4_1\": {", p);
		else
			fprintf(os, "             expected FPR (Lemma 4.1, cell FPR p = %.3g):", p);
		for (int i = 0; i < 4; i++) {
			double q = pow(1 - 1.0 / (double)B, vs[i]);
			double f = pow(p * q + 1 - q, lr->u.rambo.reps);
			if (json)
				fprintf(os, "%s\"V=%d\": %.6g", i ? ", " : "", vs[i], f);
			else
				fprintf(os, " V=%d %.3g%s", vs[i], f, i == 3 ? "\n" : ",");
		}
		if (json)
			fputs("}}", os);
	}
	free(cells);
	return rc;
}

static void hex(char *out, const uint8_t *p, int n)
{
	for (int i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
}

/* How the snapshot's keys were made: the catalog's "input" and the rules that go with it. */
struct key_rules {
	char input[16], paths[32];
	unsigned kmer, max_term, path_max;
	size_t stop_words;
};

static void key_rules(const bfi_snapshot *s, struct key_rules *r)
{
	memset(r, 0, sizeof *r);
	snprintf(r->input, sizeof r->input, "keys");
	meta_str(s, BFI_META_INPUT, r->input, sizeof r->input);
	r->kmer = meta_uint(s, BFI_META_KMER, 0);
	r->max_term = meta_uint(s, BFI_META_TEXT_MAX_TERM, 32);
	r->path_max = meta_uint(s, BFI_META_PATH_MAX, 0);
	meta_str(s, BFI_META_PATHS, r->paths, sizeof r->paths);
	const void *v;
	size_t vl;
	if (bfi_catalog_meta(s, BFI_META_TEXT_STOP_WORDS, &v, &vl) == 0)
		for (size_t i = 0; i < vl; i++)
			r->stop_words += ((const char *)v)[i] == '\n';
}

static void print_key_rules(const struct key_rules *r, int json)
{
	if (json) {
		fputs(", \"keys\": {\"input\": ", os);
		json_str(os, r->input, strlen(r->input));
		if (!strcmp(r->input, "fasta") || !strcmp(r->input, "protein"))
			fprintf(os, ", \"kmer\": %u", r->kmer);
		if (!strcmp(r->input, "text"))
			fprintf(os, ", \"max_term\": %u, \"stop_words\": %zu", r->max_term, r->stop_words);
		if (r->paths[0]) {
			fputs(", \"paths\": ", os);
			json_str(os, r->paths, strlen(r->paths));
			fprintf(os, ", \"path_max\": %u", r->path_max);
		}
		fputs("}", os);
		return;
	}
	fputs("keys         ", os);
	if (!strcmp(r->input, "fasta"))
		fprintf(os, "canonical %u-mers of FASTA/FASTQ sequences (bfi query splits queries so)\n",
		       r->kmer);
	else if (!strcmp(r->input, "protein"))
		fprintf(os, "amino-acid %u-mers of protein FASTA/FASTQ sequences (bfi query splits "
		        "queries so)\n",
		        r->kmer);
	else if (!strcmp(r->input, "text"))
		fprintf(os, "text terms: ASCII letters and digits, lower-cased, at most %u bytes; %zu stop "
		       "words (bfi query splits queries so)\n",
		       r->max_term, r->stop_words);
	else if (!strcmp(r->input, "paths")) {
		fputs("JSON/XML paths, ", os);
		text_str(os, r->paths, strlen(r->paths));
		fprintf(os, " encoding, sub-paths of at most %u names (bfi query --path)\n", r->path_max);
	} else if (!strcmp(r->input, "keys"))
		fputs("as given, byte for byte\n", os);
	else {
		text_str(os, r->input, strlen(r->input));
		fputs(" (an input kind this bfi does not know)\n", os);
	}
}

/* The tree: its shape, then each level's nodes, width, fill and expected rate. */
static int print_tree(const bfi_snapshot *s, const struct bfi_info *in,
                      const struct bfi_layout_info *li, int json)
{
	(void)in;
	if (json) {
		fprintf(os, ", \"%s\": {\"fanout\": %u, \"groups\": \"%s\", \"prefilter_bits\": %llu, "
		       "\"dropped_levels\": %u, \"dropped_nodes\": %llu, \"levels\": [",
		       bfi_layout_name(li->layout), li->u.tree.fanout, li->u.tree.explicit_groups ? "explicit" : "implied",
		       (unsigned long long)li->u.tree.prefilter_bits, li->u.tree.dropped_levels,
		       (unsigned long long)li->u.tree.dropped_nodes);
		uint64_t below = 0;
		for (uint32_t l = 0; l < li->u.tree.levels; l++) {
			uint64_t nodes, m;
			double fill, fpr;
			if (bfi_tree_level(s, l, &nodes, &m, &fill, &fpr) == 0)
				fprintf(os, "%s{\"nodes\": %llu, \"mean_children\": %.3f, \"bits\": %llu, "
				       "\"fill\": %.6f, \"expected_fpr\": %.6g}",
				       l ? ", " : "", (unsigned long long)nodes,
				       l ? (double)below / (double)nodes : 0.0, (unsigned long long)m, fill, fpr);
			below = nodes;
		}
		fputs("]}", os);
		return 0;
	}
	if (li->u.tree.explicit_groups)
		fprintf(os, "%-12s %u levels, built by insertion (order %u: %u to %u children), "
		       "union pre-filter %llu bits\n",
		       bfi_layout_name(li->layout), li->u.tree.levels, li->u.tree.fanout, li->u.tree.fanout, 2 * li->u.tree.fanout,
		       (unsigned long long)li->u.tree.prefilter_bits);
	else
		fprintf(os, "%-12s %u levels, fanout %u, union pre-filter %llu bits\n", bfi_layout_name(li->layout),
		       li->u.tree.levels, li->u.tree.fanout, (unsigned long long)li->u.tree.prefilter_bits);
	fprintf(os, "             %u levels above, %llu nodes, too full to prune: not stored\n"
	       "             level  nodes       children/node  m bits      mean fill  expected FPR\n",
	       li->u.tree.dropped_levels, (unsigned long long)li->u.tree.dropped_nodes);
	for (uint32_t l = li->u.tree.levels; l-- > 0;) {
		uint64_t nodes, m, below = 0, mm;
		double fill, fpr;
		if (l > 0 && bfi_tree_level(s, l - 1, &below, &mm, NULL, NULL) != 0)
			below = 0;
		if (bfi_tree_level(s, l, &nodes, &m, &fill, &fpr) != 0)
			continue;
		char ch[32] = "-";
		if (l > 0)
			snprintf(ch, sizeof ch, "%.2f", (double)below / (double)nodes);
		fprintf(os, "             %-6u %-11llu %-14s %-11llu %-10.4f %.3g\n", l,
		       (unsigned long long)nodes, ch, (unsigned long long)m, fill, fpr);
	}
	return 0;
}

/*
 * Is flat block b (bi) one of a grouped run (spec/format.md, "Grouped
 * blocks")? Its rows then start where a neighbour's do: the run's.
 */
static int in_run(const bfi_snapshot *s, const struct bfi_layout_info *li, uint32_t b,
                  const struct bfi_block_info *bi)
{
	struct bfi_block_info o;
	return (b > 0 && bfi_block(s, b - 1, &o) == 0 && o.offset == bi->offset) ||
	       (b + 1 < li->u.flat.blocks && bfi_block(s, b + 1, &o) == 0 && o.offset == bi->offset);
}

/* The flat layout: the order of its sets, then each block. */
static int print_flat(const bfi_snapshot *s, const struct bfi_info *in,
                      const struct bfi_layout_info *li, int json)
{
	(void)in;
	if (json) {
		fprintf(os, ", \"size_ordered\": %s, \"line_prefilters\": %s, \"blocks\": [",
		       li->u.flat.size_ordered ? "true" : "false",
		       li->u.flat.line_prefilters ? "true" : "false");
		for (uint32_t b = 0; b < li->u.flat.blocks; b++) {
			struct bfi_block_info bi;
			if (bfi_block(s, b, &bi))
				continue;
			fprintf(os, "%s{\"first_set\": %llu, \"sets\": %llu, \"bits\": %llu, "
			       "\"row_bits\": %llu, \"prefilter_bits\": %llu, \"grouped\": %s}",
			       b ? ", " : "", (unsigned long long)bi.first_set,
			       (unsigned long long)bi.n_sets, (unsigned long long)bi.bits,
			       (unsigned long long)bi.row_bits, (unsigned long long)bi.prefilter_bits,
			       in_run(s, li, b, &bi) ? "true" : "false");
		}
		fputs("]", os);
		return 0;
	}
	fprintf(os, "%s blocks  %u (sets ordered by %s%s)\n", bfi_layout_name(li->layout), li->u.flat.blocks,
	       li->u.flat.size_ordered ? "size" : "input order",
	       li->u.flat.line_prefilters ? "; pre-filters of one line per key" : "");
	fprintf(os, "             first set  sets      m bits     row bits   pre-filter bits\n");
	for (uint32_t b = 0; b < li->u.flat.blocks; b++) {
		struct bfi_block_info bi;
		if (b == 12 && li->u.flat.blocks > 16) {
			fprintf(os, "             ... %u more\n", li->u.flat.blocks - 16);
			b = li->u.flat.blocks - 4;
		}
		if (bfi_block(s, b, &bi))
			continue;
		fprintf(os, "             %-10llu %-9llu %-10llu %-10llu %llu%s\n",
		       (unsigned long long)bi.first_set, (unsigned long long)bi.n_sets,
		       (unsigned long long)bi.bits, (unsigned long long)bi.row_bits,
		       (unsigned long long)bi.prefilter_bits,
		       in_run(s, li, b, &bi) ? "  (grouped: its rows share lines with its run's)" : "");
	}
	return 0;
}

/*
 * Each layout's own part of the report, in the report's order. A layout
 * the snapshot lacks prints nothing, except flat's JSON fields, which the
 * report always has (false, and no blocks).
 */
static const struct part {
	unsigned layout;
	int (*print)(const bfi_snapshot *s, const struct bfi_info *in,
	             const struct bfi_layout_info *li, int json);
	int json_always;
} parts[] = {
	{BFI_LAYOUT_TREE, print_tree, 0},
	{BFI_LAYOUT_RAMBO, print_rambo, 0},
	{BFI_LAYOUT_FLAT, print_flat, 1},
};

/* The names of the layouts s holds, in their flags' order: a JSON list's items, or words. */
static void print_layouts(const bfi_snapshot *s, int json)
{
	int first = 1;
	struct bfi_info in;
	struct bfi_segment_info sg;
	bfi_info(s, &in);
	/* a collection: the layouts every segment holds, as its first segment names them */
	if (in.segments && bfi_segment(s, 0, &sg) == 0)
		s = sg.snap;
	for (unsigned flag = 1; flag; flag <<= 1) {
		struct bfi_layout_info li;
		if ((in.segments && !(in.layouts & flag)) || bfi_layout_info(s, flag, &li) != 0)
			continue;
		fprintf(os, json ? "%s\"%s\"" : "%s%s", !json ? " " : first ? "" : ", ", li.name);
		first = 0;
	}
}

/* A collection's segments, one line (or JSON object) each. */
static void print_segments(const bfi_snapshot *s, const struct bfi_info *in, int json)
{
	for (uint32_t i = 0; i < in->segments; i++) {
		struct bfi_segment_info sg;
		struct bfi_info si;
		struct bfi_layout_info fl;
		if (bfi_segment(s, i, &sg) != 0)
			continue;
		bfi_info(sg.snap, &si);
		uint32_t blocks = bfi_layout_info(sg.snap, BFI_LAYOUT_FLAT, &fl) == 0 ? fl.u.flat.blocks : 0;
		if (json) {
			fprintf(os, "%s{\"name\": \"%s\", \"first\": %llu, \"sets\": %llu, \"live\": %llu, "
			       "\"index_bytes\": %llu, \"catalog_bytes\": %llu, \"widest_bits\": %llu, "
			       "\"flat_blocks\": %u, \"layouts\": [",
			       i ? ", " : "", sg.name, (unsigned long long)sg.first,
			       (unsigned long long)sg.n_sets, (unsigned long long)sg.live,
			       (unsigned long long)si.file_size, (unsigned long long)si.catalog_size,
			       (unsigned long long)si.bits, blocks);
			print_layouts(sg.snap, 1);
			fputs("]}", os);
		} else {
			fprintf(os, "  %s  %llu sets, %llu live, index %llu bytes, widest m %llu, %u flat "
			       "blocks, layouts",
			       sg.name, (unsigned long long)sg.n_sets, (unsigned long long)sg.live,
			       (unsigned long long)si.file_size, (unsigned long long)si.bits, blocks);
			print_layouts(sg.snap, 0);
			fputc('\n', os);
		}
	}
}

/*
 * Each layout's own parameters (bfi_layout_params): a JSON object of
 * objects by layout name, or a line a layout that has any.
 */
static void print_params(const bfi_snapshot *s, int json)
{
	int first = 1;
	if (json)
		fputs(", \"layout_params\": {", os);
	for (unsigned flag = 1; flag; flag <<= 1) {
		struct bfi_layout_param p[16];
		char text[1024];
		int n = bfi_layout_params(s, flag, p, sizeof p / sizeof *p);
		if (n <= 0)
			continue;
		n = n < 16 ? n : 16;
		if (json) { /* the names are the library's own identifiers */
			fprintf(os, "%s\"%s\": {", first ? "" : ", ", bfi_layout_name(flag));
			for (int i = 0; i < n; i++)
				fprintf(os, "%s\"%s\": %llu", i ? ", " : "", p[i].name,
				        (unsigned long long)p[i].value);
			fputs("}", os);
		} else {
			layout_params_text(p, n, "  ", text, sizeof text);
			fprintf(os, "%-12s %s\n", bfi_layout_name(flag), text);
		}
		first = 0;
	}
	if (json)
		fputs("}", os);
}

/* The parts of the report for the layouts s holds; then their own parameters. */
static int print_parts(const bfi_snapshot *s, const struct bfi_info *in, int json)
{
	int rc = 0;
	for (size_t i = 0; i < sizeof parts / sizeof *parts && rc == 0; i++) {
		struct bfi_layout_info li;
		if (bfi_layout_info(s, parts[i].layout, &li) != 0) {
			if (!(json && parts[i].json_always))
				continue;
			memset(&li, 0, sizeof li);
		}
		rc = parts[i].print(s, in, &li, json);
	}
	struct bfi_segment_info sg;
	if (rc == 0)
		print_params(in->segments && bfi_segment(s, 0, &sg) == 0 ? sg.snap : s, json);
	return rc;
}

int inspect_write(FILE *o, const bfi_snapshot *s, const char *path, int json)
{
	os = o;
	struct bfi_info in;
	bfi_info(s, &in);
	int rc;
	struct fill f;
	rc = fill_stats(s, &in, &f);
	if (rc)
		return rc;
	const void *mv;
	size_t ml;
	char target[40] = "unknown", writer[64] = "unknown", id[33], dg[33];
	if (bfi_catalog_meta(s, "fpr", &mv, &ml) == 0)
		snprintf(target, sizeof target, "%.*s", (int)ml, (const char *)mv);
	if (bfi_catalog_meta(s, "writer", &mv, &ml) == 0)
		snprintf(writer, sizeof writer, "%.*s", (int)ml, (const char *)mv);
	struct key_rules kr;
	key_rules(s, &kr);
	hex(id, in.snapshot_id, 16);
	hex(dg, in.catalog_digest, 16);

	if (json) {
		/* the object's shape, named: a change that would break a reader of it bumps the number */
		fputs("{\"schema\": \"bfi-inspect-1\", \"path\": ", os);
		if (path) /* NULL: not said (bfi serve keeps its file system to itself) */
			json_str(os, path, strlen(path));
		else
			fputs("null", os);
		if (in.segments) {
			fprintf(os, ", \"collection\": {\"generation\": %llu, \"segments\": %u, "
			       "\"ordinals\": %llu, \"segment_list\": [",
			       (unsigned long long)in.generation, in.segments,
			       (unsigned long long)in.ordinals);
			print_segments(s, &in, 1);
			fputs("]}", os);
		}
		fprintf(os, ", \"format\": {\"major\": %u, \"minor\": %u, \"compat_flags\": %llu}",
		       in.major, in.minor, (unsigned long long)in.compat_flags);
		fprintf(os, ", \"snapshot_id\": \"%s\", \"catalog_digest\": \"%s\"", id, dg);
		fprintf(os, ", \"files\": [{\"name\": \"index.bfi\", \"bytes\": %llu}, "
		       "{\"name\": \"catalog.mdb\", \"bytes\": %llu}]",
		       (unsigned long long)in.file_size, (unsigned long long)in.catalog_size);
		fputs(", \"writer\": ", os);
		json_str(os, writer, strlen(writer));
		fprintf(os, ", \"sets\": %llu, \"bits\": %llu, \"hashes\": %u, \"layouts\": [",
		       (unsigned long long)in.n_sets, (unsigned long long)in.bits, in.hashes);
		print_layouts(s, 1);
		fputs("]", os);
		rc = print_parts(s, &in, 1);
		if (rc)
			return rc;
		char *tend;
		double tf = strtod(target, &tend);
		if (target[0] && !*tend && tf > 0 && tf < 1) /* the catalog's text, made a JSON number */
			fprintf(os, ", \"target_fpr\": %.17g", tf);
		else
			fputs(", \"target_fpr\": null", os);
		print_key_rules(&kr, 1);
		fputs(", \"sections\": [", os);
		for (uint32_t i = 0; i < in.n_sections; i++) {
			struct bfi_section_info si;
			if (bfi_section(s, i, &si))
				continue;
			fprintf(os, "%s{\"kind\": \"%s\", \"kind_id\": %u, \"encoding\": \"%s\", "
			       "\"offset\": %llu, \"stored_size\": %llu, \"size\": %llu, "
			       "\"checksum\": \"%016llx\"}",
			       i ? ", " : "", bfi_section_kind_name(si.kind), si.kind,
			       si.encoding == 0 ? "raw" : si.encoding == 1 ? "zstd" : "unknown",
			       (unsigned long long)si.offset, (unsigned long long)si.stored_size,
			       (unsigned long long)si.size, (unsigned long long)si.checksum);
		}
		fprintf(os, "], \"largest_set_keys\": %llu", (unsigned long long)f.max_keys);
		fprintf(os, ", \"fill\": {\"min\": %.6f, \"median\": %.6f, \"mean\": %.6f, \"max\": %.6f, "
		       "\"histogram\": [",
		       f.min, f.median, f.mean, f.max);
		for (int b = 0; b < BUCKETS; b++)
			fprintf(os, "%s{\"from\": %.1f, \"to\": %.1f, \"sets\": %llu}", b ? ", " : "",
			       (double)b / BUCKETS, (double)(b + 1) / BUCKETS,
			       (unsigned long long)f.hist[b]);
		fprintf(os, "]}, \"expected_fpr\": {\"mean\": %.6g, \"max\": %.6g, "
		       "\"worst_set_theory\": %.6g}}\n",
		       f.fpr_mean, f.fpr_max, f.fpr_theory);
	} else {
		fprintf(os, "snapshot     %s\n", path);
		if (in.segments) /* a collection: what follows is of its first segment, sizes summed */
			fprintf(os, "collection   generation %llu, %u segments, %llu live sets of %llu "
			       "ordinals (%llu removed)\n",
			       (unsigned long long)in.generation, in.segments,
			       (unsigned long long)in.n_sets, (unsigned long long)in.ordinals,
			       (unsigned long long)(in.ordinals - in.n_sets));
		print_segments(s, &in, 0);
		fprintf(os, "files        index.bfi %llu bytes, catalog.mdb %llu bytes\n",
		       (unsigned long long)in.file_size, (unsigned long long)in.catalog_size);
		fprintf(os, "format       %u.%u (compatible flags 0x%llx), written by ", in.major, in.minor,
		       (unsigned long long)in.compat_flags);
		text_str(os, writer, strlen(writer));
		fputc('\n', os);
		fprintf(os, "snapshot id  %s\ncatalog      digest %s\n", id, dg);
		fprintf(os, "sets         %llu (largest: %llu distinct keys)\n",
		       (unsigned long long)in.n_sets, (unsigned long long)f.max_keys);
		fprintf(os, "filters      k = %u hashes, widest m = %llu bits, target fpr ", in.hashes,
		       (unsigned long long)in.bits);
		text_str(os, target, strlen(target));
		fputc('\n', os);
		print_key_rules(&kr, 0);
		fprintf(os, "layouts     ");
		print_layouts(s, 0);
		fputc('\n', os);
		rc = print_parts(s, &in, 0);
		if (rc)
			return rc;
		fprintf(os, "sections     #  kind       encoding  offset        size          checksum\n");
		for (uint32_t i = 0; i < in.n_sections; i++) {
			struct bfi_section_info si;
			if (bfi_section(s, i, &si))
				continue;
			fprintf(os, "             %-2u %-10s %-9s %-13llu %-13llu %016llx\n", i,
			       bfi_section_kind_name(si.kind), si.encoding == 0 ? "raw" : "zstd",
			       (unsigned long long)si.offset, (unsigned long long)si.size,
			       (unsigned long long)si.checksum);
		}
		fprintf(os, "fill ratio   min %.4f  median %.4f  mean %.4f  max %.4f\n", f.min, f.median,
		       f.mean, f.max);
		uint64_t top = 1;
		for (int b = 0; b < BUCKETS; b++)
			if (f.hist[b] > top)
				top = f.hist[b];
		for (int b = 0; b < BUCKETS; b++) {
			char bar[41];
			int w = (int)((f.hist[b] * 40 + top - 1) / top);
			memset(bar, '#', (size_t)w);
			bar[w] = 0;
			fprintf(os, "  %.1f-%.1f  %-40s %llu\n", (double)b / BUCKETS, (double)(b + 1) / BUCKETS,
			       bar, (unsigned long long)f.hist[b]);
		}
		fprintf(os, "expected fpr mean %.3g, highest %.3g, from the filters' fill; by the Bloom "
		       "formula of its keys, the highest %.3g\n",
		       f.fpr_mean, f.fpr_max, f.fpr_theory);
	}
	return ferror(os) ? 1 : 0; /* not flushed: the caller does, and sees why it fails */
}
