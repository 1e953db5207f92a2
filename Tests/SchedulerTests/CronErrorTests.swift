import Foundation
import Testing
@testable import Scheduler

/// Every way a schedule can be refused, with the exact message a user sees.
@Suite("Cron errors")
struct CronErrorTests {
    func error(_ expression: String, timeZone: String = "UTC") -> String {
        failure { _ = try CronSchedule(expression, timeZone: timeZone) }
    }

    @Test("not five fields", arguments: [
        ("* * * *", #"cron_field_count: cron "* * * *": expected 5 fields, got 4"#),
        ("* * * * * *", #"cron_field_count: cron "* * * * * *": expected 5 fields, got 6"#),
        ("", #"cron_field_count: cron "": expected 5 fields, got 0"#),
        ("   ", #"cron_field_count: cron "": expected 5 fields, got 0"#),
    ])
    func fieldCount(expression: String, message: String) {
        #expect(error(expression) == message)
    }

    @Test("a value out of its field's range", arguments: [
        ("61 * * * *", #"cron_out_of_range: cron "61 * * * *": minute 61 is out of range 0-59"#),
        ("0 24 * * *", #"cron_out_of_range: cron "0 24 * * *": hour 24 is out of range 0-23"#),
        ("0 0 0 * *", #"cron_out_of_range: cron "0 0 0 * *": day-of-month 0 is out of range 1-31"#),
        ("0 0 32 * *", #"cron_out_of_range: cron "0 0 32 * *": day-of-month 32 is out of range 1-31"#),
        ("0 0 * 13 *", #"cron_out_of_range: cron "0 0 * 13 *": month 13 is out of range 1-12"#),
        ("0 0 * 0 *", #"cron_out_of_range: cron "0 0 * 0 *": month 0 is out of range 1-12"#),
        ("0 0 * * 8", #"cron_out_of_range: cron "0 0 * * 8": day-of-week 8 is out of range 0-7"#),
        ("0 0 * * 1-8", #"cron_out_of_range: cron "0 0 * * 1-8": day-of-week 8 is out of range 0-7"#),
        ("99999999999999999999 * * * *",
         #"cron_out_of_range: cron "99999999999999999999 * * * *": minute 99999999999999999999 is out of range 0-59"#),
    ])
    func outOfRange(expression: String, message: String) {
        #expect(error(expression) == message)
    }

    @Test("a name that is not a month or weekday, or a name in a numeric field", arguments: [
        ("0 0 * JANX *", #"cron_unknown_name: cron "0 0 * JANX *": unknown month name "JANX" (use JAN-DEC)"#),
        ("0 0 * * Monday", #"cron_unknown_name: cron "0 0 * * Monday": unknown day-of-week name "Monday" (use SUN-SAT)"#),
        ("0 0 * * MON-FRIDAY",
         #"cron_unknown_name: cron "0 0 * * MON-FRIDAY": unknown day-of-week name "FRIDAY" (use SUN-SAT)"#),
        ("0 MON * * *",
         #"cron_unknown_name: cron "0 MON * * *": hour "MON" is not a number (names are for month and day-of-week)"#),
    ])
    func unknownName(expression: String, message: String) {
        #expect(error(expression) == message)
    }

    @Test("a step of 0, too large, not a number, doubled, or on a single value", arguments: [
        ("*/0 * * * *", #"cron_step: cron "*/0 * * * *": minute step 0 must be at least 1"#),
        ("0 0-12/0 * * *", #"cron_step: cron "0 0-12/0 * * *": hour step 0 must be at least 1"#),
        ("*/60 * * * *", #"cron_step: cron "*/60 * * * *": minute step 60 is out of range 1-59"#),
        ("0 0 */31 * *", #"cron_step: cron "0 0 */31 * *": day-of-month step 31 is out of range 1-30"#),
        ("0 0 * * */7", #"cron_step: cron "0 0 * * */7": day-of-week step 7 is out of range 1-6"#),
        ("*/x * * * *", #"cron_step: cron "*/x * * * *": minute step "x" is not a number"#),
        ("*/ * * * *", #"cron_step: cron "*/ * * * *": minute step "" is not a number"#),
        ("*/2/3 * * * *", #"cron_step: cron "*/2/3 * * * *": minute "*/2/3" has more than one step"#),
        ("5/10 * * * *", #"cron_step: cron "5/10 * * * *": minute "5/10": a step needs a range or * (write 5-59/10)"#),
    ])
    func step(expression: String, message: String) {
        #expect(error(expression) == message)
    }

    @Test("a range that runs backwards", arguments: [
        ("0 5-1 * * *", #"cron_reversed_range: cron "0 5-1 * * *": hour range 5-1 is reversed"#),
        ("0 0 * DEC-JAN *", #"cron_reversed_range: cron "0 0 * DEC-JAN *": month range DEC-JAN is reversed"#),
        ("0 0 * * FRI-SUN", #"cron_reversed_range: cron "0 0 * * FRI-SUN": day-of-week range FRI-SUN is reversed"#),
    ])
    func reversedRange(expression: String, message: String) {
        #expect(error(expression) == message)
    }

    @Test("items that cannot be read", arguments: [
        ("1,,2 * * * *", #"cron_syntax: cron "1,,2 * * * *": minute "1,,2" has an empty list item"#),
        ("0 1, * * *", #"cron_syntax: cron "0 1, * * *": hour "1," has an empty list item"#),
        ("1- * * * *", #"cron_syntax: cron "1- * * * *": minute "1-" is not a range: write a-b"#),
        ("-5 * * * *", #"cron_syntax: cron "-5 * * * *": minute "-5" is not a range: write a-b"#),
        ("1-2-3 * * * *", #"cron_syntax: cron "1-2-3 * * * *": minute "1-2-3" is not a range: write a-b"#),
        ("5x * * * *", #"cron_syntax: cron "5x * * * *": minute "5x" is not a number"#),
        ("0 0 L * *", #"cron_unknown_name: cron "0 0 L * *": day-of-month "L" is not a number (names are for month and day-of-week)"#),
        ("0 0 ? * *", #"cron_syntax: cron "0 0 ? * *": day-of-month "?" is not a number"#),
        ("/5 * * * *", #"cron_syntax: cron "/5 * * * *": minute "/5" has no value before the step"#),
    ])
    func syntax(expression: String, message: String) {
        #expect(error(expression) == message)
    }

    @Test("macros other than the supported ones", arguments: [
        ("@fortnightly", #"cron_unknown_macro: cron "@fortnightly": unknown macro @fortnightly (use @yearly, @annually, @monthly, @weekly, @daily, @midnight or @hourly)"#),
        ("@reboot", #"cron_unknown_macro: cron "@reboot": @reboot is not supported: a job needs a time to fire"#),
        ("@daily 5", #"cron_unknown_macro: cron "@daily 5": @daily must stand alone"#),
        ("@Hourly\t*", "cron_unknown_macro: cron \"@Hourly\t*\": @hourly must stand alone"),
    ])
    func macro(expression: String, message: String) {
        #expect(error(expression) == message)
    }

    @Test("a time zone the tz database does not know")
    func unknownZone() {
        #expect(error("0 0 * * *", timeZone: "Mars/Olympus")
            == #"unknown_time_zone: unknown time zone "Mars/Olympus": use a name from the tz database, such as "UTC", "Europe/Berlin" or "America/New_York""#)
        #expect(error("0 0 * * *", timeZone: "").hasPrefix(#"unknown_time_zone: unknown time zone "":"#))
    }
}
