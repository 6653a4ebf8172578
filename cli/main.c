/* main — git-style subcommand dispatch for bin/tierplan. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../model/catalog.h"
#include "../reports/report.h"
#include "cli.h"

static const struct command {
	const char *name;
	int (*fn)(int, char **);
	const char *summary;
} commands[] = {
	{"plan", cmd_plan, "sizing report: GPU-only and tiered options, time, power, cost"},
	{"compare", cmd_compare, "GPU-only against tiered at each GPU count, side by side"},
	{"simulate", cmd_simulate, "one exact configuration through the discrete-event simulator"},
	{"sweep", cmd_sweep, "many configurations from a grid file -> CSV or JSON lines"},
	{"calibrate", cmd_calibrate, "measure this machine (DRAM, CPU Adam, fio, CUDA) -> profile JSON"},
	{"validate", cmd_validate, "predictions against recorded measurements, per category"},
	{"regress", cmd_regress, "golden scenario predictions: compare, or --update"},
	{"models", cmd_models, "list the model catalog"},
	{"hardware", cmd_hardware, "list the GPU, flash and host catalogs"},
};

#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *fp)
{
	fprintf(fp, "usage: tierplan <command> [options]\n\ncommands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(fp, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(fp, "  %-10s %s\n", "help", "help CMD prints a command's options");
	fprintf(fp, "  %-10s %s\n", "version", "print the version");
	fprintf(fp, "\nexit codes: 0 ok, 1 infeasible, 2 usage, 3 invalid input, 4 system error\n");
}

int cli_fail(int code, const char *cmd, const char *msg)
{
	if (code == EXIT_USAGE)
		fprintf(stderr, "tierplan%s%s: %s (see 'tierplan %s%s--help')\n", cmd ? " " : "",
			cmd ? cmd : "", msg, cmd ? cmd : "", cmd ? " " : "");
	else
		fprintf(stderr, "tierplan%s%s: %s\n", cmd ? " " : "", cmd ? cmd : "", msg);
	return code;
}

int cli_option(const char *a, const char *const *known)
{
	for (int i = 0; known[i]; i++)
		if (strcmp(a, known[i]) == 0)
			return i;
	return -1;
}

int cli_bad_arg(const char *cmd, const char *a, const char *const *known, const char *word)
{
	char msg[512];
	if (known && cli_option(a, known) >= 0)
		snprintf(msg, sizeof msg, "%s needs a value", a);
	else if (a[0] != '-' && word)
		snprintf(msg, sizeof msg, "unexpected argument '%.200s' (did you mean %s %.200s?)",
			 a, word, a);
	else if (a[0] != '-')
		snprintf(msg, sizeof msg, "unexpected argument '%.200s'", a);
	else {
		int n = 0;
		char hint[256];
		while (known && known[n])
			n++;
		snprintf(msg, sizeof msg, "unknown option '%.200s'%s", a,
			 cfg_near_hint(cfg_did_you_mean(a, known, n), hint, sizeof hint));
	}
	return cli_fail(EXIT_USAGE, cmd, msg);
}

int cli_out_code(int rc)
{
	return rc == CFG_OUT_REFUSED ? EXIT_INVALID : EXIT_SYSTEM;
}

/* What a command wrote to stdout must have arrived: a full disk or a closed stdout is a system
 * error, whatever the command found. */
static int finish(const char *cmd, int rc)
{
	if ((fflush(stdout) != 0 || ferror(stdout)) && rc != EXIT_SYSTEM) {
		char msg[160];
		snprintf(msg, sizeof msg, "cannot write to standard output: %s", strerror(errno));
		return cli_fail(EXIT_SYSTEM, cmd, msg);
	}
	return rc;
}

int main(int argc, char **argv)
{
	const char *name;

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	name = argv[1];
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
		usage(stdout);
		return EXIT_OK;
	}
	if (strcmp(name, "version") == 0 || strcmp(name, "--version") == 0) {
		printf("tierplan %s\n", TIERPLAN_VERSION);
		return EXIT_OK;
	}
	if (strcmp(name, "help") == 0) {
		if (argc < 3) {
			usage(stdout);
			return EXIT_OK;
		}
		for (size_t i = 0; i < NCOMMANDS; i++)
			if (strcmp(commands[i].name, argv[2]) == 0) {
				char *args[] = {argv[0], argv[2], "--help", NULL};
				return finish(argv[2], commands[i].fn(3, args));
			}
		name = argv[2];
	} else {
		for (size_t i = 0; i < NCOMMANDS; i++)
			if (strcmp(commands[i].name, name) == 0)
				return finish(name, commands[i].fn(argc, argv));
	}
	const char *names[NCOMMANDS];
	for (size_t i = 0; i < NCOMMANDS; i++)
		names[i] = commands[i].name;
	char msg[200], hint[64];
	snprintf(msg, sizeof msg, "unknown command '%.100s'%s", name,
		 cfg_near_hint(cfg_did_you_mean(name, names, (int)NCOMMANDS), hint, sizeof hint));
	return cli_fail(EXIT_USAGE, NULL, msg);
}
