//! Nothing to compile: the build script's check is the point.
