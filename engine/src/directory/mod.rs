//! The filesystem boundary: memory maps and page-cache advice (the crate's only
//! `unsafe`), durable and atomic writes that never follow a planted symlink, reads that
//! refuse anything but a regular file, and the writer's lock file.

mod atomic;
mod cache;
mod files;
mod lock;
mod mmap;
mod sigbus;

#[cfg(test)]
pub(crate) use atomic::take_synced_dirs;
pub(crate) use atomic::{atomic_replace, fsync_dir};
pub(crate) use cache::drop_cached_pages;
pub(crate) use files::{create_fresh, kind_of, open_regular, read_regular, write_fresh};
pub(crate) use lock::{DirLock, LOCK_FILE};
pub(crate) use mmap::MappedFile;
pub(crate) use sigbus::{faulted_paths, faults};
