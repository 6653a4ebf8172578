/* fuzz_cli — libFuzzer target: the command-line parser. The input is split at NUL bytes and
 * newlines into arguments and parsed for every command. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../sim/opts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *argv[66] = {"tierplan", "cmd"};
	int argc = 2;
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	char *p = buf, *end = buf + size;
	while (p < end && argc < 65) {
		argv[argc++] = p;
		while (p < end && *p && *p != '\n')
			p++;
		*p++ = '\0';
	}
	argv[argc] = NULL;
	static const int cmds[] = {CMD_PLAN, CMD_SIMULATE, CMD_MODELS, CMD_HARDWARE};
	for (size_t c = 0; c < sizeof cmds / sizeof cmds[0]; c++) {
		struct tp_opts o;
		char err[512];
		(void)tp_opts_parse(cmds[c], argc, argv, 2, &o, err, sizeof err);
	}
	free(buf);
	return 0;
}
