/* fuzz_text — the fuzzer's bytes as a NUL-terminated string, for the parsers that take text.
 * NULL when out of memory; the caller frees. */
#ifndef TIERPLAN_FUZZ_TEXT_H
#define TIERPLAN_FUZZ_TEXT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline char *fuzz_text(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (text) {
		memcpy(text, data, size);
		text[size] = '\0';
	}
	return text;
}

#endif
