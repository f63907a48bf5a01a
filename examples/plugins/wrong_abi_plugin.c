/* A plugin that claims a future ABI version: loading it must stop with one line and exit 2. */
#include "shapescope_plugin.h"

static const shapescope_plugin kPlugin = {SHAPESCOPE_PLUGIN_ABI_VERSION + 1u, 0, NULL};

const shapescope_plugin* shapescope_plugin_entry(void) { return &kPlugin; }
