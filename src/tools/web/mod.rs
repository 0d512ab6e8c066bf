//! The web tools: `search_web` (SerpAPI) and `fetch_web_page` (a page as text, public
//! addresses only), with the settings they share and the HTML reading behind the fetch.

pub mod fetch;
pub mod html_parse;
pub mod html_text;
pub mod net_guard;
pub mod resolver;
pub mod search;
pub mod settings;

pub use fetch::FetchTool;
pub use html_parse::ParseLimits;
pub use search::SearchWebTool;
pub use settings::WebSettings;

use super::registry::ToolRegistry;

/// Adds `search_web` and `fetch_web_page`.
pub fn register(registry: &mut ToolRegistry, settings: &WebSettings) {
    registry.register(SearchWebTool::new(settings.clone()));
    registry.register(FetchTool::new(settings.clone()));
}
