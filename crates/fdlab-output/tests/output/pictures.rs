//! How pictures look: colour ranges over the frames so far, times in titles.

use fdlab_output::pictures::look::{time_text, TimeUnit};
use fdlab_output::pictures::scale::{Rule, Running};

#[test]
fn signed_fields_clip_at_a_fraction_of_the_peak_so_far_and_say_so() {
    let rule = Rule {
        signed: true,
        clip: 0.25,
        fixed: None,
    };
    let mut r = Running::default();
    let s0 = r.next(&rule, &[0.0, 0.0]);
    assert_eq!(
        (s0.lo, s0.hi, s0.below, s0.above),
        (-1.0, 1.0, false, false)
    );
    let s1 = r.next(&rule, &[-8.0, 2.0]);
    assert_eq!((s1.lo, s1.hi, s1.below, s1.above), (-2.0, 2.0, true, false));
    // A weaker later frame keeps the earlier peak's range.
    let s2 = r.next(&rule, &[-1.0, 1.0]);
    assert_eq!(
        (s2.lo, s2.hi, s2.below, s2.above),
        (-2.0, 2.0, false, false)
    );
}

#[test]
fn heat_spans_the_whole_range_so_far_and_a_fixed_range_wins() {
    let heat = Rule {
        signed: false,
        clip: 1.0,
        fixed: None,
    };
    let mut r = Running::default();
    let s = r.next(&heat, &[20.0, 100.0]);
    assert_eq!((s.lo, s.hi, s.below, s.above), (20.0, 100.0, false, false));
    let s = Running::default().next(&heat, &[1e-5, 28.5]);
    assert_eq!(
        (s.lo, s.hi),
        (0.0, 28.5),
        "a minimum near zero reads from 0"
    );
    let fixed = Rule {
        fixed: Some([0.0, 50.0]),
        ..heat
    };
    let s = Running::default().next(&fixed, &[20.0, 100.0]);
    assert_eq!((s.lo, s.hi, s.below, s.above), (0.0, 50.0, false, true));
}

#[test]
fn titles_show_times_in_a_unit_that_suits_the_output_interval() {
    let s = TimeUnit::new(Some("s".into()), 0.9);
    assert_eq!(time_text(0.4622, 0.012, &s), "0.462 s");
    let ms = TimeUnit::new(Some("s".into()), 0.01);
    assert_eq!(time_text(3e-4, 3e-4, &ms), "0.30 ms");
    let none = TimeUnit::new(None, 0.066);
    assert_eq!(time_text(1.8, 0.066, &none), "1.800");
}
