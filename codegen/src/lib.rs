pub mod ident;
pub mod model;
