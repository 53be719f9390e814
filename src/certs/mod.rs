//! Certificates shared by `winlint manifests` and `winlint serve`: whether a CA bundle verifies
//! a serving certificate for the name the API server calls (what the API server itself checks
//! before it sends a review), and the certificate directory of `manifests --url`.

pub mod issue;
pub mod verify;
