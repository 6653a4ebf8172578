/*
 * cli — the subcommand table and the helpers every command shares.
 *
 * cli/ is the only code that knows argv, stdout and exit codes: each cmd_*.c parses its flags,
 * calls the layers below (validate/, reports/, sim/, model/; never the other way), prints, and
 * turns their status into the process's exit code.
 *
 * Exit codes (DESIGN.md): 0 ok, 1 infeasible or check failed, 2 usage, 3 invalid input file or
 * value, 4 system error. Usage errors print one line and a usage hint to stderr; `--help` prints
 * the command's usage and options to stdout.
 */
#ifndef TIERPLAN_CLI_H
#define TIERPLAN_CLI_H

#include "../sim/opts.h" /* the status codes, EXIT_* */

int cmd_plan(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_regress(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_models(int argc, char **argv);
int cmd_hardware(int argc, char **argv);

/* Prints "tierplan CMD: msg" to stderr as one line (usage errors end with the --help hint);
 * returns code. */
int cli_fail(int code, const char *cmd, const char *msg);
/* The usage error (exit 2) of an argument `a` no option of cmd took: one of `known` (cmd's
 * options, a NULL-terminated list; a flag never gets here) with no value after it, a bare word
 * (with `word`, the option it most likely belongs to: "--grid"), or an unknown option, with the
 * option of `known` it most likely misspells. */
int cli_bad_arg(const char *cmd, const char *a, const char *const *known, const char *word);
/* The index of `a` in `known` (NULL-terminated), or -1. A command lists its options once, as an
 * array indexed by its own enum, and switches on this: each name is spelled in one place. */
int cli_option(const char *a, const char *const *known);
/* The exit code of an output that failed (cfg_out and the report writers): a path that is not
 * ours to write is invalid input (3), anything else a system error (4). */
int cli_out_code(int rc);

#endif
