//! File names as messages show them. (Stand-in until the GNU-style quoting lands.)

use std::ffi::OsStr;

/// `name` for a one-line message.
pub fn quote(name: &OsStr) -> String {
    name.to_string_lossy().escape_debug().to_string()
}
