/*
 * file — read small input files whole, write output files atomically.
 *
 * Inputs (config.json, catalogs, grids) are read whole into memory after checking that the path
 * is a regular file under a size limit and holds no NUL byte, so a directory, a device, a huge or
 * a binary file gets one clear message instead of a parse error deep inside cJSON.
 * Also lists the JSON files of a directory in a stable order (traces, scenarios).
 * Depends only on libc.
 */
#ifndef TIERPLAN_FILE_H
#define TIERPLAN_FILE_H

#include <stddef.h>

/* Reads path (at most max bytes) into a malloc'd NUL-terminated buffer. what names the file's
 * role in messages ("config", "catalog"). NULL with err filled on failure. */
char *cfg_read_file(const char *path, const char *what, size_t max, char *err, size_t errlen);

/* The names of the .json files in dir, sorted (a malloc'd array of malloc'd strings, which
 * cfg_list_free releases). Returns the count, or -1 when dir cannot be opened. */
int cfg_list_json(const char *dir, char ***names);
void cfg_list_free(char **names, int n);

#endif
