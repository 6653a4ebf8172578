/* fuzz_grid — libFuzzer target: a sweep grid through the reader, the enumeration of its points and the
 * check of the first point's flags against the option table. */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_text.h"
#include "../../sim/grid.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512], *text = fuzz_text(data, size);
	if (!text)
		return 0;
	struct tp_grid g;
	if (tp_grid_parse(text, "fuzz", &g, err, sizeof err) == 0) {
		char *argv[TP_GRID_ARGV], flags[2 * TP_GRID_KEYS][48];
		int idx[TP_GRID_KEYS];
		(void)tp_grid_check(&g, "fuzz", err, sizeof err);
		for (uint64_t p = 0; p < g.points && p < 64; p++) {
			tp_grid_coords(&g, p, idx);
			(void)tp_grid_argv(&g, p, argv, flags);
		}
	}
	tp_grid_free(&g);
	free(text);
	return 0;
}
