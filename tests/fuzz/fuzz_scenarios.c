/* fuzz_scenarios — libFuzzer target: a regress scenario file through the reader: names (they name golden
 * files), duplicates, flags objects. */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_text.h"
#include "../../validate/validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512], *text = fuzz_text(data, size);
	if (!text)
		return 0;
	struct val_scenarios s = {0};
	(void)val_scenarios_add(&s, text, "fuzz", err, sizeof err);
	(void)val_scenarios_add(&s, text, "fuzz-again", err, sizeof err); /* every name twice */
	val_scenarios_free(&s);
	free(text);
	return 0;
}
