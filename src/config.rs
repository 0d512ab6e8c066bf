//! Configuration: .env files, environment and flags.
