//! DeepSeek's published prices for the built-in presets, as read on [`PRICES_DATE`], and its
//! peak hours.
//!
//! Peak hours are Beijing time (UTC+8), Monday to Friday, 09:00–12:00 and 14:00–18:00; every
//! other time, weekends included, is off-peak, at half the peak price. DeepSeek also bills
//! China's statutory holidays off-peak, but MiniClaw has no holiday calendar: a holiday that
//! falls on a weekday is priced as a weekday, an over-estimate, never an under-estimate.

use chrono::{DateTime, Datelike, Timelike, Utc, Weekday};

use super::money::{Rate, Rates};
use crate::llm::Preset;
use crate::settings::Currency;

/// When the table was read off DeepSeek's pricing page (shown in the README and `/status`).
pub const PRICES_DATE: &str = "2026-12-02";

/// Which of DeepSeek's two price periods a moment falls in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hours {
    /// Weekdays 09:00–12:00 and 14:00–18:00 Beijing time.
    Peak,
    /// Every other time.
    OffPeak,
}

impl Hours {
    /// The period of `at`.
    pub fn at(at: DateTime<Utc>) -> Self {
        let beijing = at.with_timezone(&chrono_tz::Asia::Shanghai);
        let weekday = !matches!(beijing.weekday(), Weekday::Sat | Weekday::Sun);
        let hour = beijing.hour();
        if weekday && ((9..12).contains(&hour) || (14..18).contains(&hour)) {
            Self::Peak
        } else {
            Self::OffPeak
        }
    }
}

/// A model DeepSeek bills by the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableModel {
    /// The flash preset (sent as `deepseek-flash`, or by its older name `deepseek-v4-flash`).
    Flash,
    /// `deepseek-v4-pro`.
    Pro,
}

impl TableModel {
    /// The table's model of `preset`: DeepSeek's presets by what they are, a custom name sent
    /// to DeepSeek by the names DeepSeek bills; nothing for any other model.
    pub fn of(preset: &Preset) -> Option<Self> {
        match preset {
            Preset::Flash => Some(Self::Flash),
            Preset::Pro => Some(Self::Pro),
            Preset::Custom(name) => {
                let name = name.trim().to_ascii_lowercase();
                [Self::Flash, Self::Pro]
                    .into_iter()
                    .find(|m| m.names().contains(&name.as_str()))
            }
            Preset::Provided(_) => None,
        }
    }

    /// The model names DeepSeek bills this way.
    pub fn names(self) -> &'static [&'static str] {
        match self {
            Self::Flash => &["deepseek-flash", "deepseek-v4-flash"],
            Self::Pro => &["deepseek-v4-pro"],
        }
    }

    /// The published prices in `currency` during `hours`.
    pub fn rates(self, currency: Currency, hours: Hours) -> Rates {
        // Millionths of a unit per million tokens: (cache hit, cache miss, output) off-peak;
        // peak is twice each.
        let (hit, miss, output) = match (self, currency) {
            (Self::Flash, Currency::Usd) => (3_000, 150_000, 600_000),
            (Self::Flash, Currency::Cny) => (20_000, 1_000_000, 4_000_000),
            (Self::Pro, Currency::Usd) => (22_000, 660_000, 1_980_000),
            (Self::Pro, Currency::Cny) => (150_000, 4_500_000, 13_500_000),
        };
        let factor = match hours {
            Hours::OffPeak => 1,
            Hours::Peak => 2,
        };
        Rates {
            cache_hit: Rate::micros_per_million(hit * factor),
            cache_miss: Rate::micros_per_million(miss * factor),
            output: Rate::micros_per_million(output * factor),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    /// A moment given in Beijing time.
    fn beijing(y: i32, m: u32, d: u32, h: u32, min: u32) -> DateTime<Utc> {
        chrono_tz::Asia::Shanghai
            .with_ymd_and_hms(y, m, d, h, min, 0)
            .single()
            .unwrap()
            .with_timezone(&Utc)
    }

    #[test]
    fn peak_hours_are_weekday_mornings_and_afternoons_in_beijing() {
        // 2026-12-02 is a Wednesday.
        assert_eq!(Hours::at(beijing(2026, 12, 2, 8, 59)), Hours::OffPeak);
        assert_eq!(Hours::at(beijing(2026, 12, 2, 9, 0)), Hours::Peak);
        assert_eq!(Hours::at(beijing(2026, 12, 2, 11, 59)), Hours::Peak);
        assert_eq!(Hours::at(beijing(2026, 12, 2, 12, 0)), Hours::OffPeak);
        assert_eq!(Hours::at(beijing(2026, 12, 2, 13, 59)), Hours::OffPeak);
        assert_eq!(Hours::at(beijing(2026, 12, 2, 14, 0)), Hours::Peak);
        assert_eq!(Hours::at(beijing(2026, 12, 2, 17, 59)), Hours::Peak);
        assert_eq!(Hours::at(beijing(2026, 12, 2, 18, 0)), Hours::OffPeak);
        // Saturday and Sunday mornings are off-peak.
        assert_eq!(Hours::at(beijing(2026, 12, 5, 10, 0)), Hours::OffPeak);
        assert_eq!(Hours::at(beijing(2026, 12, 6, 15, 0)), Hours::OffPeak);
        // 02:30 UTC on a Wednesday is 10:30 in Beijing.
        let utc = Utc
            .with_ymd_and_hms(2026, 12, 2, 2, 30, 0)
            .single()
            .unwrap();
        assert_eq!(Hours::at(utc), Hours::Peak);
        // Friday 23:00 UTC is Saturday 07:00 in Beijing.
        let utc = Utc
            .with_ymd_and_hms(2026, 12, 4, 23, 0, 0)
            .single()
            .unwrap();
        assert_eq!(Hours::at(utc), Hours::OffPeak);
        // National Day (a statutory holiday) on a weekday is priced as a weekday.
        assert_eq!(Hours::at(beijing(2026, 10, 1, 10, 0)), Hours::Peak);
    }

    #[test]
    fn the_table_is_the_published_one() {
        let per_million = |r: Rate| r.of(1_000_000).units();
        let row = |m: TableModel, c, h| {
            let r = m.rates(c, h);
            [r.cache_hit, r.cache_miss, r.output].map(per_million)
        };
        use Currency::*;
        use Hours::*;
        assert_eq!(row(TableModel::Flash, Usd, OffPeak), [0.003, 0.15, 0.60]);
        assert_eq!(row(TableModel::Flash, Usd, Peak), [0.006, 0.30, 1.20]);
        assert_eq!(row(TableModel::Flash, Cny, OffPeak), [0.02, 1.0, 4.0]);
        assert_eq!(row(TableModel::Flash, Cny, Peak), [0.04, 2.0, 8.0]);
        assert_eq!(row(TableModel::Pro, Usd, OffPeak), [0.022, 0.66, 1.98]);
        assert_eq!(row(TableModel::Pro, Usd, Peak), [0.044, 1.32, 3.96]);
        assert_eq!(row(TableModel::Pro, Cny, OffPeak), [0.15, 4.5, 13.5]);
        assert_eq!(row(TableModel::Pro, Cny, Peak), [0.30, 9.0, 27.0]);
    }

    #[test]
    fn deepseeks_names_price_like_the_presets_and_others_have_no_price() {
        assert_eq!(TableModel::of(&Preset::Flash), Some(TableModel::Flash));
        assert_eq!(TableModel::of(&Preset::Pro), Some(TableModel::Pro));
        for name in ["deepseek-flash", "DeepSeek-V4-Flash "] {
            assert_eq!(
                TableModel::of(&Preset::Custom(name.into())),
                Some(TableModel::Flash)
            );
        }
        assert_eq!(
            TableModel::of(&Preset::Custom("deepseek-v4-pro".into())),
            Some(TableModel::Pro)
        );
        assert_eq!(
            TableModel::of(&Preset::Custom("deepseek-chat".into())),
            None
        );
    }
}
