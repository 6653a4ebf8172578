/* file — see file.h. */
#include "file.h"

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
