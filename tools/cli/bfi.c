/* bfi.c - the bfi command: one entry point, one subcommand per job, from a table. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools.h"

static const char usage[] =
	"Usage: bfi COMMAND [OPTIONS] ...\n"
	"\n"
	"Immutable, memory-mapped index snapshots over many Bloom filters.\n"
	"\n"
	"Commands:\n"
	"  build    write a snapshot from a directory of sets or set<TAB>key lines\n"
	"  append   add sets to a collection of snapshots as a new segment\n"
	"  remove   remove sets from a collection by name\n"
	"  compact  join a collection's segments, dropping removed sets\n"
	"  merge    join snapshots and collections into one snapshot\n"
	"  query    which sets may contain each key\n"
	"  inspect  show a snapshot's header, sections, parameters and fill ratios\n"
	"  verify   check every checksum of a snapshot\n"
	"  serve    answer queries over HTTP, swapping in republished snapshots\n"
	"  bench    measure queries against the memory-bandwidth bound and plain\n"
	"  synth    write the Bloofi paper's synthetic workload\n"
	"  fold     halve a rambo layout's cells (OR the two halves)\n"
	"  stack    combine rambo shards built with identical parameters\n"
	"  filter   make and use one Bloom filter in its own file (federated sites)\n"
	"  pack     write a snapshot or collection as one compressed, checked file\n"
	"  unpack   write a pack back to a snapshot or collection\n"
	"\n"
	"Run 'bfi COMMAND --help' for a command's options.\n"
	"Exit status: 0 success, 1 corrupt snapshot or pack (verify, unpack), 2 usage or\n"
	"I/O error.\n";

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} commands[] = {
	{"build", cmd_build}, {"append", cmd_append}, {"remove", cmd_remove},
	{"compact", cmd_compact}, {"merge", cmd_merge},
	{"query", cmd_query}, {"inspect", cmd_inspect},
	{"verify", cmd_verify}, {"serve", cmd_serve}, {"synth", cmd_synth}, {"bench", cmd_bench},
	{"fold", cmd_fold},   {"stack", cmd_stack}, {"filter", cmd_filter},
	{"pack", cmd_pack},   {"unpack", cmd_unpack},
};

/*
 * A descriptor 0, 1 or 2 that the caller left closed would be the next one
 * open() returns, and a snapshot's file would then be read as queries or
 * written as answers: hold each such one open on /dev/null.
 */
static void hold_std_fds(void)
{
	for (int fd = 0; fd < 3; fd++) {
		if (fcntl(fd, F_GETFD) != -1)
			continue;
		if (fd == 0)
			stdin_closed = 1;
		int n = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
		if (n >= 0 && n != fd) { /* a lower one was closed too, and is taken now */
			dup2(n, fd);
			close(n);
		}
	}
}

int main(int argc, char **argv)
{
	hold_std_fds();
	if (argc < 2) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
		fputs(usage, stdout);
		return stdout_close("bfi") ? EXIT_USAGE : EXIT_OK;
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
		unsigned major, minor;
		const char *v = bfi_version(&major, &minor);
		char names[200];
		/* a snapshot is written in the oldest minor that holds it: inspect says which */
		printf("bfi %s (reads and writes index format %u.0 to %u.%u)\nlayouts: %s\n", v, major,
		       major, minor, layout_names(0, " ", names, sizeof names));
		return stdout_close("bfi") ? EXIT_USAGE : EXIT_OK;
	}
	const char *kernel = getenv("BFI_KERNEL");
	if (kernel && strcmp(kernel, "portable") && strcmp(kernel, "avx2")) {
		fprintf(stderr, "bfi: BFI_KERNEL=%s: no such kernel; use portable or avx2 (the default "
		                "where the CPU has it)\n",
		        kernel);
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) {
		if (strcmp(cmd, commands[i].name))
			continue;
		char name[40];
		snprintf(name, sizeof name, "bfi %s", cmd);
		guard_install(name);
		/* output is checked once, at exit: a buffer big enough that it fails there, with its errno */
		static char obuf[1 << 18];
		if (!isatty(STDOUT_FILENO))
			setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
		/* getopt names the program by argv[0] in its messages: "bfi build: ..." */
		argv[1] = name;
		int rc = commands[i].run(argc - 1, argv + 1);
		int oc = stdout_close(name);
		return rc ? rc : oc;
	}
	fprintf(stderr, "bfi: unknown command '%s'\nTry 'bfi --help'.\n", cmd);
	return EXIT_USAGE;
}
