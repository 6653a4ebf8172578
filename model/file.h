/*
 * file — read small input files whole, write output files atomically.
 *
 * Inputs (config.json, catalogs, grids) are read whole into memory after checking that the path
 * is a regular file under a size limit and holds no NUL byte, so a directory, a device, a huge or
 * a binary file gets one clear message instead of a parse error deep inside cJSON.
 * Also lists the JSON files of a directory in a stable order (traces, scenarios).
 *
 * Outputs the user names (--trace, --out, report files, goldens) are written as what the path
 * is (STYLE.md, "Files"): a regular file or a new name through a unique mkstemp temporary in
 * its directory (O_EXCL, so a planted name is never followed), renamed over the target on close,
 * so concurrent writers leave one whole file (the last one wins) and an interrupted run leaves
 * the old one; a character device or FIFO is written in place (no temporary, never renamed
 * over); "-" is stdout; anything else (a symlink, a directory, a block device, a socket) is
 * refused. Nothing is deleted but the temporary it created.
 * Depends only on libc.
 */
#ifndef TIERPLAN_FILE_H
#define TIERPLAN_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Reads path (at most max bytes) into a malloc'd NUL-terminated buffer. what names the file's
 * role in messages ("config", "catalog"). NULL with err filled on failure. */
char *cfg_read_file(const char *path, const char *what, size_t max, char *err, size_t errlen);

/* Whether a flag's value names a file rather than a catalog entry: it has a '/' or ends in
 * ".json" (--model x.json, --gpu gpus/a.json; --model 70b is the catalog's). */
bool cfg_is_path(const char *s);
/* A path named inside file (a sweep's grid, a validate trace, a regress scenario file) as the
 * process opens it: a relative one is taken beside file, so the file reads the same from any
 * directory; an absolute one stays. Into out (n bytes); -1 when the result does not fit. */
int cfg_path_beside(const char *file, const char *path, char *out, size_t n);

/* The names of the .json files in dir, sorted (a malloc'd array of malloc'd strings, which
 * cfg_list_free releases). Returns the count, or -1 when dir cannot be opened. */
int cfg_list_json(const char *dir, char ***names);
void cfg_list_free(char **names, int n);

/* What identifies a file's content without reading it: device, inode, size and modification
 * time. Two equal stamps mean the same content for the memos of catalogs and configs; a file
 * rewritten in place within the filesystem's timestamp resolution at the same size would fool
 * it, which no input of tierplan's does. */
struct cfg_stamp {
	unsigned long long dev, ino, size, mtime_ns;
};
/* 0 and the stamp, -1 when path cannot be stat'ed. */
int cfg_file_stamp(const char *path, struct cfg_stamp *s);
/* From now on the inputs this process read stay what they were: every stamp reads as the same
 * (zero) one, so the memos of catalogs and configs answer by name without a stat per lookup. A
 * sweep calls it once, before its workers start, as it reads its inputs once; never undone. */
void cfg_freeze_stamps(void);

/* An output file being written: fp is where to write. */
struct cfg_out {
	FILE *fp;
	char path[4096]; /* the target */
	char tmp[4096];  /* the temporary renamed over it on close; "" when written in place */
	bool is_stdout;
};

enum { CFG_OUT_REFUSED = -1, CFG_OUT_IO = -2 };

/* Opens path for writing as above. what names the flag in messages ("--trace"). 0 ok;
 * CFG_OUT_REFUSED when the target is not a file to write (a symlink, directory, block device,
 * socket; a missing directory; an empty path), CFG_OUT_IO when the system fails; err says why. */
int cfg_out_open(struct cfg_out *o, const char *path, const char *what, char *err, size_t errlen);

/* Creates directory path and its missing parents (mode, less the umask), as mkdir -p; an
 * existing directory is fine. 0 ok, -1 with err naming `what` and the part that failed. */
int cfg_mkdirs(const char *path, unsigned mode, const char *what, char *err, size_t errlen);
/* Flushes and closes; renames the temporary over the target. 0 ok, CFG_OUT_IO + err (the
 * temporary removed, the target untouched). */
int cfg_out_close(struct cfg_out *o, const char *what, char *err, size_t errlen);
/* Gives up: closes and removes the temporary, leaves the target as it was. */
void cfg_out_abort(struct cfg_out *o);

/* Checks, before long work, that cfg_out_open will take path: not empty, "-", a character
 * device or FIFO, or a new name or regular file in an existing directory. 0 ok,
 * CFG_OUT_REFUSED + err. */
int cfg_out_check(const char *path, const char *what, char *err, size_t errlen);

/* Checks that path may be replaced by a rename: it does not exist, or is a regular file (not a
 * symlink). 0 ok, CFG_OUT_REFUSED + err. */
int cfg_out_replaceable(const char *path, const char *what, char *err, size_t errlen);
/* The mode a temporary renamed over path takes: path's own where it is a regular file, else
 * what a new file gets (0666 less the umask); mkstemp's 0600 would hide a report's files. */
unsigned cfg_out_mode(const char *path);

#endif
