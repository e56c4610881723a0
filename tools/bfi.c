/* bfi.c - the bfi command: one entry point, one subcommand per job. */
#include <stdio.h>
#include <string.h>

#include "format.h"
#include "tools.h"

static const char usage[] =
	"Usage: bfi COMMAND [OPTIONS] ...\n"
	"\n"
	"Immutable, memory-mapped index snapshots over many Bloom filters.\n"
	"\n"
	"Commands:\n"
	"  build    write a snapshot from a directory of sets or set<TAB>key lines\n"
	"  query    which sets may contain each key\n"
	"  inspect  show a snapshot's header, sections, parameters and fill ratios\n"
	"  verify   check every checksum of a snapshot\n"
	"  bench    measure queries against the memory-bandwidth bound and plain\n"
	"  synth    write the Bloofi paper's synthetic workload\n"
	"  fold     halve a rambo layout's cells (OR the two halves)\n"
	"  stack    combine rambo shards built with identical parameters\n"
	"  filter   make and use one Bloom filter in its own file (federated sites)\n"
	"\n"
	"Run 'bfi COMMAND --help' for a command's options.\n"
	"Exit status: 0 success, 1 corrupt snapshot (verify), 2 usage or I/O error.\n";

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
		fputs(usage, stdout);
		return EXIT_OK;
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
		printf("bfi %s (format %u.%u)\n", BFI_VERSION_STRING, BFI_VERSION_MAJOR,
		       BFI_VERSION_MINOR);
		return EXIT_OK;
	}
	if (!strcmp(cmd, "build"))
		return cmd_build(argc - 1, argv + 1);
	if (!strcmp(cmd, "query"))
		return cmd_query(argc - 1, argv + 1);
	if (!strcmp(cmd, "inspect"))
		return cmd_inspect(argc - 1, argv + 1);
	if (!strcmp(cmd, "verify"))
		return cmd_verify(argc - 1, argv + 1);
	if (!strcmp(cmd, "synth"))
		return cmd_synth(argc - 1, argv + 1);
	if (!strcmp(cmd, "bench"))
		return cmd_bench(argc - 1, argv + 1);
	if (!strcmp(cmd, "fold"))
		return cmd_fold(argc - 1, argv + 1);
	if (!strcmp(cmd, "stack"))
		return cmd_stack(argc - 1, argv + 1);
	if (!strcmp(cmd, "filter"))
		return cmd_filter(argc - 1, argv + 1);
	fprintf(stderr, "bfi: unknown command '%s'\n\n%s", cmd, usage);
	return EXIT_USAGE;
}
