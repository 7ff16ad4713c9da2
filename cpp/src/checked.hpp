// The core's sources include "checked.hpp"; the header is public (attn/checked.hpp) so the
// training library can use it without the core's private include path.
#pragma once

#include "attn/checked.hpp"
