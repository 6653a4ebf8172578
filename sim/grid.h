/*
 * grid — a sweep's grid of simulate flags: {"base": {flag: value}, "grid": {flag: [values]}}.
 * The points are the Cartesian product of the grid's lists, the last key varying fastest; each
 * point is the argv `tierplan simulate` would get. sweep runs them; this module only reads and
 * enumerates, so it is what the fuzzer and the tests drive. A file a value names by a relative
 * path (models/x.json) is read beside the grid file, as validate reads a trace's: a grid runs the
 * same from any directory.
 * Bounds: at most TP_GRID_KEYS base and grid keys; the point count must fit 64 bits.
 * Failure: -1 with a message naming the file and key; tp_grid_free is safe after any failure.
 */
#ifndef TIERPLAN_GRID_H
#define TIERPLAN_GRID_H

#include <stddef.h>
#include <stdint.h>

#define TP_GRID_KEYS 24
/* argv entries of one point: "tierplan simulate", a flag and a value per key, NULL */
#define TP_GRID_ARGV (2 + 4 * TP_GRID_KEYS + 1)

struct cJSON;
/* A value as the grid writes it (vals: the point's columns) and as simulate gets it (args: a
 * file it names by a relative path taken beside the grid file, cfg_path_beside; else a copy);
 * list: the grid file's own array of them (in root), whose numbers a JSON row keeps as
 * numbers. */
struct tp_grid_axis {
	const char *key;
	int n;
	char **vals, **args;
	const struct cJSON *list;
};

struct tp_grid {
	struct cJSON *root;
	int nbase, naxes;
	const char *base_key[TP_GRID_KEYS];
	char *base_val[TP_GRID_KEYS], *base_arg[TP_GRID_KEYS];
	struct tp_grid_axis ax[TP_GRID_KEYS];
	uint64_t points;
};

/* Reads the grid file at path / parses text (path names it in messages). 0 ok, -1 + err. */
int tp_grid_load(const char *path, struct tp_grid *g, char *err, size_t errlen);
int tp_grid_parse(const char *text, const char *path, struct tp_grid *g, char *err, size_t errlen);
void tp_grid_free(struct tp_grid *g);

/* The value index of each axis for point p (idx has TP_GRID_KEYS entries). */
void tp_grid_coords(const struct tp_grid *g, uint64_t p, int *idx);
/* The simulate argv of point p into argv (TP_GRID_ARGV entries); flags holds the "--key"
 * strings. Returns argc. */
int tp_grid_argv(const struct tp_grid *g, uint64_t p, char **argv, char flags[][48]);
/* What would fail every point that has it, checked before any runs: every point has the same
 * keys, so an unknown key or a missing required one (--model, --seq) is found in the first
 * point's flags; and each base and grid value that cannot run on its own (tp_input_value: a
 * model file that is not there, an unknown GPU, a count out of range). 0 ok, -1 + err naming the
 * key and, in the grid, which of its values. */
int tp_grid_check(const struct tp_grid *g, const char *path, char *err, size_t errlen);

#endif
