/* file — see file.h. */
#include "file.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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

bool cfg_is_path(const char *s)
{
	size_t n = strlen(s);
	return strchr(s, '/') || (n >= 5 && !strcmp(s + n - 5, ".json"));
}

int cfg_path_beside(const char *file, const char *path, char *out, size_t n)
{
	const char *slash = strrchr(file, '/');
	int dir = path[0] == '/' || !slash ? 0 : (int)(slash - file + 1);
	int k = snprintf(out, n, "%.*s%s", dir, file, path);
	return k < 0 || (size_t)k >= n ? -1 : 0;
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

static bool stamps_frozen; /* written before any worker thread exists, read-only after */

void cfg_freeze_stamps(void)
{
	stamps_frozen = true;
}

int cfg_file_stamp(const char *path, struct cfg_stamp *s)
{
	struct stat st;

	if (stamps_frozen) {
		*s = (struct cfg_stamp){0};
		return 0;
	}
	if (stat(path, &st) != 0)
		return -1;
	*s = (struct cfg_stamp){(unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
				(unsigned long long)st.st_size,
				(unsigned long long)st.st_mtim.tv_sec * 1000000000ull +
					(unsigned long long)st.st_mtim.tv_nsec};
	return 0;
}

int cfg_out_replaceable(const char *path, const char *what, char *err, size_t errlen)
{
	struct stat st;

	if (lstat(path, &st) != 0)
		return 0; /* a new name */
	if (S_ISREG(st.st_mode))
		return 0;
	snprintf(err, errlen, "%s: '%s' is %s, not a file tierplan replaces", what, path,
		 S_ISLNK(st.st_mode)   ? "a symbolic link (give the file it points to)"
		 : S_ISDIR(st.st_mode) ? "a directory"
		 : S_ISBLK(st.st_mode) ? "a block device"
				       : "a special file");
	return CFG_OUT_REFUSED;
}

int cfg_out_check(const char *path, const char *what, char *err, size_t errlen)
{
	struct stat st;
	char dir[4096];

	if (!path || !*path) {
		snprintf(err, errlen, "%s: an empty path", what);
		return CFG_OUT_REFUSED;
	}
	if (!strcmp(path, "-") ||
	    (lstat(path, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))))
		return 0;
	int rc = cfg_out_replaceable(path, what, err, errlen);
	if (rc)
		return rc;
	const char *slash = strrchr(path, '/');
	if (!slash)
		return 0;
	snprintf(dir, sizeof dir, "%.*s", (int)(slash - path) + 1, path);
	if (!slash[1] || stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: '%s': %s", what, path,
			 !slash[1] ? "names a directory" : "its directory does not exist");
		return CFG_OUT_REFUSED;
	}
	return 0;
}

unsigned cfg_out_mode(const char *path)
{
	struct stat st;
	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode))
		return st.st_mode & 07777;
	mode_t mask = umask(0);
	umask(mask);
	return 0666 & ~mask;
}

int cfg_out_open(struct cfg_out *o, const char *path, const char *what, char *err, size_t errlen)
{
	struct stat st;

	memset(o, 0, sizeof *o);
	if (!path || !*path) {
		snprintf(err, errlen, "%s: an empty path", what);
		return CFG_OUT_REFUSED;
	}
	if (!strcmp(path, "-")) {
		o->fp = stdout;
		o->is_stdout = true;
		snprintf(o->path, sizeof o->path, "-");
		return 0;
	}
	if (snprintf(o->path, sizeof o->path, "%s", path) >= (int)sizeof o->path) {
		snprintf(err, errlen, "%s: path too long", what);
		return CFG_OUT_REFUSED;
	}
	if (lstat(path, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
		/* a device or pipe is written in place, never replaced */
		int fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || !(o->fp = fdopen(fd, "w"))) {
			snprintf(err, errlen, "%s: cannot write '%s': %s", what, path, strerror(errno));
			if (fd >= 0)
				close(fd);
			return CFG_OUT_IO;
		}
		return 0;
	}
	int rc = cfg_out_replaceable(path, what, err, errlen);
	if (rc)
		return rc;
	/* DIR/.NAME.XXXXXX beside the target, so the rename stays on one filesystem */
	const char *slash = strrchr(path, '/');
	int dlen = slash ? (int)(slash - path) + 1 : 0;
	const char *base = slash ? slash + 1 : path;
	if (!*base) {
		snprintf(err, errlen, "%s: '%s' names a directory", what, path);
		return CFG_OUT_REFUSED;
	}
	if (snprintf(o->tmp, sizeof o->tmp, "%.*s.%.200s.XXXXXX", dlen, path, base) >=
	    (int)sizeof o->tmp) {
		snprintf(err, errlen, "%s: path too long", what);
		return CFG_OUT_REFUSED;
	}
	int fd = mkostemp(o->tmp, O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: cannot write '%s': %s", what, path, strerror(e));
		o->tmp[0] = '\0';
		return e == ENOENT || e == ENOTDIR ? CFG_OUT_REFUSED : CFG_OUT_IO;
	}
	if (fchmod(fd, (mode_t)cfg_out_mode(path)) != 0 || !(o->fp = fdopen(fd, "w"))) {
		snprintf(err, errlen, "%s: cannot write '%s': %s", what, o->tmp, strerror(errno));
		close(fd);
		unlink(o->tmp);
		o->tmp[0] = '\0';
		return CFG_OUT_IO;
	}
	return 0;
}

int cfg_mkdirs(const char *path, unsigned mode, const char *what, char *err, size_t errlen)
{
	char buf[4096];
	struct stat st;
	size_t n = strlen(path);

	if (n == 0 || n >= sizeof buf) {
		snprintf(err, errlen, "%s: the path is empty or too long", what);
		return -1;
	}
	memcpy(buf, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		char c = buf[i];
		buf[i] = '\0';
		if (stat(buf, &st) != 0) {
			if (mkdir(buf, (mode_t)mode) != 0 && errno != EEXIST) {
				snprintf(err, errlen, "%s: cannot create directory '%.300s': %s", what, buf,
					 strerror(errno));
				return -1;
			}
		} else if (!S_ISDIR(st.st_mode)) {
			snprintf(err, errlen, "%s: '%.300s' exists and is not a directory", what, buf);
			return -1;
		}
		buf[i] = c;
	}
	return 0;
}

int cfg_out_close(struct cfg_out *o, const char *what, char *err, size_t errlen)
{
	bool bad = fflush(o->fp) != 0 || ferror(o->fp);
	int e = errno;

	if (o->is_stdout) {
		o->fp = NULL;
		if (bad)
			snprintf(err, errlen, "%s: cannot write to stdout: %s", what, strerror(e));
		return bad ? CFG_OUT_IO : 0;
	}
	if (fclose(o->fp) != 0 && !bad) {
		bad = true;
		e = errno;
	}
	o->fp = NULL;
	if (!bad && o->tmp[0] && rename(o->tmp, o->path) != 0) {
		bad = true;
		e = errno;
	}
	if (bad) {
		if (o->tmp[0])
			unlink(o->tmp);
		snprintf(err, errlen, "%s: cannot write '%s': %s", what, o->path, strerror(e));
	}
	o->tmp[0] = '\0';
	return bad ? CFG_OUT_IO : 0;
}

void cfg_out_abort(struct cfg_out *o)
{
	if (o->fp && !o->is_stdout)
		fclose(o->fp);
	o->fp = NULL;
	if (o->tmp[0])
		unlink(o->tmp);
	o->tmp[0] = '\0';
}
