/* file — see file.h. */
#include "file.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

char *cfg_read_file(const char *path, const char *what, size_t max, char *err, size_t errlen)
{
	struct stat st;
	FILE *fp;
	char *buf = NULL;
	size_t n;

	if (stat(path, &st) < 0) {
		snprintf(err, errlen, "cannot open %s '%s': %s", what, path, strerror(errno));
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s '%s' is not a regular file", what, path);
		return NULL;
	}
	if ((size_t)st.st_size > max) {
		snprintf(err, errlen, "%s '%s' is too large (%lld bytes, limit %zu)", what, path,
			 (long long)st.st_size, max);
		return NULL;
	}
	fp = fopen(path, "rb");
	if (!fp) {
		snprintf(err, errlen, "cannot open %s '%s': %s", what, path, strerror(errno));
		return NULL;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		snprintf(err, errlen, "out of memory reading %s '%s'", what, path);
		goto out;
	}
	n = fread(buf, 1, (size_t)st.st_size, fp);
	if (ferror(fp)) {
		snprintf(err, errlen, "cannot read %s '%s'", what, path);
		goto fail;
	}
	buf[n] = '\0';
	if (n == 0) {
		snprintf(err, errlen, "%s '%s' is empty", what, path);
		goto fail;
	}
	if (strlen(buf) != n) {
		snprintf(err, errlen, "%s '%s' contains a NUL byte (binary file?)", what, path);
		goto fail;
	}
	goto out;
fail:
	free(buf);
	buf = NULL;
out:
	fclose(fp);
	return buf;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int cfg_list_json(const char *dir, char ***names)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **v = NULL;
	int n = 0, cap = 0;

	*names = NULL;
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l <= 5 || strcmp(de->d_name + l - 5, ".json"))
			continue;
		if (n == cap) {
			char **w = realloc(v, (size_t)(cap = cap ? 2 * cap : 16) * sizeof *v);
			if (!w)
				break;
			v = w;
		}
		if (!(v[n] = strdup(de->d_name)))
			break;
		n++;
	}
	closedir(d);
	if (n)
		qsort(v, (size_t)n, sizeof *v, by_name);
	*names = v;
	return n;
}

void cfg_list_free(char **names, int n)
{
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}
