package gatewaytest

import (
	"strings"
	"time"
)

// Transcripts returns the catalogue. Each runs on a fresh server, so job ids start at 1.
func Transcripts() []Transcript {
	name200 := strings.Repeat("a", 200)
	long := strings.Repeat("x", 300)
	return []Transcript{
		{Name: "PutPeekDelete", Steps: []Step{
			{Send: "put 0 0 10 5\r\nhello\r\n", Expect: "INSERTED 1\r\n"},
			{Send: "peek 1\r\n", Expect: "FOUND 1 5\r\nhello\r\n"},
			{Send: "peek-ready\r\n", Expect: "FOUND 1 5\r\nhello\r\n"},
			{Send: "delete 1\r\n", Expect: "DELETED\r\n"},
			{Send: "delete 1\r\n", Expect: "NOT_FOUND\r\n"},
			{Send: "peek 1\r\n", Expect: "NOT_FOUND\r\n"},
		}},
		{Name: "BinaryBodyWithCRLFInside", Steps: []Step{
			{Send: "put 0 0 10 6\r\na\r\n\x00b\n\r\n", Expect: "INSERTED 1\r\n"},
			{Send: "reserve\r\n", Expect: "RESERVED 1 6\r\na\r\n\x00b\n\r\n"},
		}},
		{Name: "EmptyBody", Steps: []Step{
			{Send: "put 0 0 0 0\r\n\r\n", Expect: "INSERTED 1\r\n"},
			{Send: "stats-job 1\r\n", Expect: "OK {n}\r\n---\nid: 1\ntube: \"default\"\nstate: ready\npri: 0\nage: {n}\ndelay: 0\nttr: 1\ntime-left: 0\nfile: 0\nreserves: 0\ntimeouts: 0\nreleases: 0\nburies: 0\nkicks: 0\n\r\n"},
		}},
		{Name: "PipelinedCommandsInOnePacket", Steps: []Step{
			{Send: "use a\r\nput 1 0 5 1\r\nx\r\nlist-tube-used\r\nwatch a\r\nignore default\r\nreserve\r\n",
				Expect: "USING a\r\nINSERTED 1\r\nUSING a\r\nWATCHING 2\r\nWATCHING 1\r\nRESERVED 1 1\r\nx\r\n"},
		}},
		{Name: "PipelinedPutsInOnePacket", Steps: []Step{
			// Puts that arrive together are stored together; each is still answered alone, in
			// order, and a put that fails or is not whole breaks the run where it stands.
			{Send: "put 5 0 5 1\r\na\r\nput 4 0 5 2\r\nbb\r\nput 2 0 5 1\r\nc\r\n" +
				"put 1 0 5\r\nput 1 1 5 1\r\nd\r\nput 9 0 5 1 \r\nput 0 0 0 0\r\n\r\n" +
				"use t\r\nput 7 0 5 1\r\ne\r\nput 6 0 5 1\r\nf\r\nreserve-with-timeout 0\r\nput 8 0 5 1\r\ng\r\nput 8",
				Expect: "INSERTED 1\r\nINSERTED 2\r\nINSERTED 3\r\n" +
					"BAD_FORMAT\r\nINSERTED 4\r\nBAD_FORMAT\r\nINSERTED 5\r\n" +
					"USING t\r\nINSERTED 6\r\nINSERTED 7\r\nRESERVED 5 0\r\n\r\nINSERTED 8\r\n"},
			// The rest of the last put, then one whose body is not followed by CR LF.
			{Send: " 0 5 1\r\nh\r\nput 3 0 5 1\r\nxyz\r\n", Expect: "INSERTED 9\r\nEXPECTED_CRLF\r\nUNKNOWN_COMMAND\r\n"},
			{Send: "stats-tube t\r\n", Expect: "OK {n}\r\n---\nname: \"t\"\ncurrent-jobs-urgent: 4\ncurrent-jobs-ready: 4\ncurrent-jobs-reserved: 0\ncurrent-jobs-delayed: 0\ncurrent-jobs-buried: 0\ntotal-jobs: 4\ncurrent-using: 1\ncurrent-watching: 0\ncurrent-waiting: 0\ncmd-delete: 0\ncmd-pause-tube: 0\npause: 0\npause-time-left: 0\n\r\n"},
		}},
		{Name: "CommandSplitAcrossPackets", Steps: []Step{
			{Send: "pu", Expect: ""},
			{Send: "t 0 0 1 3\r\nab", Expect: ""},
			{Send: "c\r", Expect: ""},
			{Send: "\n", Expect: "INSERTED 1\r\n"},
		}},
		{Name: "UnknownCommands", Steps: []Step{
			{Send: "PUT 0 0 0 1\r\n", Expect: "UNKNOWN_COMMAND\r\n"},
			{Send: " put 0 0 0 1\r\n", Expect: "UNKNOWN_COMMAND\r\n"},
			{Send: "\r\n", Expect: "UNKNOWN_COMMAND\r\n"},
			{Send: "put\r\n", Expect: "UNKNOWN_COMMAND\r\n"},
			{Send: "delete\r\n", Expect: "UNKNOWN_COMMAND\r\n"},
			{Send: "use\r\n", Expect: "UNKNOWN_COMMAND\r\n"},
			{Send: "list\r\n", Expect: "UNKNOWN_COMMAND\r\n"},
			{Send: "kick-job\r\n", Expect: "UNKNOWN_COMMAND\r\n"},
			{Send: "list-tube-used\r\n", Expect: "USING default\r\n"},
		}},
		{Name: "PrefixFallbacksAreBadFormat", Steps: []Step{
			{Send: "reserve-with-timeout\r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "reserve-job\r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "reservex\r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "reserve \r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "stats-job\r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "statsX\r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "peek-readyX\r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "list-tubes \r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "list-tubes-watchedX\r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "pause-tube\r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "put \r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "stats-tube \r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "sta\x00ts\r\n", Expect: "BAD_FORMAT\r\n"},
		}},
		{Name: "IntegerRules", Steps: []Step{
			{Send: "put  1   2  3  1\r\nx\r\n", Expect: "INSERTED 1\r\n"},
			{Send: "put 007 0 0 1\r\nx\r\n", Expect: "INSERTED 2\r\n"},
			{Send: "peek 0001\r\n", Expect: "FOUND 1 1\r\nx\r\n"},
			{Send: "put 0\t0 0 1\r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "delete  5555\r\n", Expect: "NOT_FOUND\r\n"},
			{Send: "delete 5555 \r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "peek 111foo\r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "peek 18446744073709551616\r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "peek 18446744073709551615\r\n", Expect: "NOT_FOUND\r\n"},
			{Send: "peek 0\r\n", Expect: "NOT_FOUND\r\n"},
			{Send: "stats-job 111 222\r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "reserve-job -1\r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "reserve-job +1\r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "bury 1 2 3\r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "release 1 2 3 4\r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "release 1\r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "release 1 2\r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "bury 1\r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "touch 1x\r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "kick-job x\r\n", Expect: "BAD_FORMAT\r\n"},
		}},
		{Name: "PutBadFormatLeavesBodyToBeParsed", Steps: []Step{
			{Send: "put -1 0 0 1\r\nx\r\n", Expect: "BAD_FORMAT\r\nUNKNOWN_COMMAND\r\n"},
			{Send: "put +1 0 0 1\r\nx\r\n", Expect: "BAD_FORMAT\r\nUNKNOWN_COMMAND\r\n"},
			{Send: "put 0 0 0\r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "put 4294967296 0 0 1\r\nx\r\n", Expect: "BAD_FORMAT\r\nUNKNOWN_COMMAND\r\n"},
			{Send: "put 0 0 0 1 \r\nx\r\n", Expect: "BAD_FORMAT\r\nUNKNOWN_COMMAND\r\n"},
			{Send: "put 0 0 0 10b\r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "put 4294967295 4294967295 4294967295 1\r\nx\r\n", Expect: "INSERTED 1\r\n"},
		}},
		{Name: "JobTooBigSwallowsTheBody", MaxJobSize: 10, Steps: []Step{
			{Send: "put 0 0 0 11\r\ndelete 9999\r\n", Expect: "JOB_TOO_BIG\r\n"},
			{Send: "put 0 0 0 10\r\n0123456789\r\n", Expect: "INSERTED 1\r\n"},
			{Send: "put 0 0 0 70000 garbage\r\n", Expect: ""},
			{Send: strings.Repeat("z", 70002), Expect: "JOB_TOO_BIG\r\n"},
			{Send: "put 0 0 0 4294967296\r\n", Expect: "BAD_FORMAT\r\n"},
		}},
		{Name: "ExpectedCRLF", Steps: []Step{
			{Send: "put 0 0 0 1\r\nxy\r\n", Expect: "EXPECTED_CRLF\r\n"},
			{Send: "list-tube-used\r\n", Expect: "UNKNOWN_COMMAND\r\n"},
			{Send: "list-tube-used\r\n", Expect: "USING default\r\n"},
		}},
		{Name: "LineOf224BytesIsParsed", Steps: []Step{
			{Send: strings.Repeat("g", 222) + "\r\n", Expect: "UNKNOWN_COMMAND\r\n"},
			{Send: "pause-tube " + name200 + " 4294967295\r\n", Expect: "NOT_FOUND\r\n"},
		}},
		{Name: "LongLineIsBadFormatThenParsingResumes", Steps: []Step{
			{Send: long + "\r\nlist-tube-used\r\n", Expect: "BAD_FORMAT\r\nUSING default\r\n"},
			{Send: strings.Repeat("y", 500), Expect: ""},
			{Send: "\r\nput 0 0 0 1\r\nx\r\n", Expect: "BAD_FORMAT\r\nINSERTED 1\r\n"},
		}},
		{Name: "LineOf225BytesDoesNotSwallowTheNext",
			Differs: "beanstalkd swallows the command after a 225-byte line (docs/protocol.md §1.3)",
			Steps: []Step{
				{Send: strings.Repeat("g", 223) + "\r\nlist-tube-used\r\n", Expect: "BAD_FORMAT\r\nUSING default\r\n"},
			}},
		{Name: "StrayCRDoesNotStall",
			Differs: "beanstalkd stalls on a CR not followed by LF (docs/protocol.md §1.2)",
			Steps: []Step{
				{Send: "stats\rX\r\nlist-tube-used\r\n", Expect: "BAD_FORMAT\r\nUSING default\r\n"},
			}},
		{Name: "LFAloneIsNotATerminator", Steps: []Step{
			{Send: "list-tube-used\n", Expect: ""},
			{Send: "list-tube-used\r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "list-tube-used\r\n", Expect: "USING default\r\n"},
		}},
		{Name: "TubeNames", Steps: []Step{
			{Send: "use " + name200 + "\r\n", Expect: "USING " + name200 + "\r\n"},
			{Send: "use " + name200 + "a\r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "use -x\r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "use a*b\r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "use foo \r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "use  foo\r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "use foo bar\r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "use \r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "use A-z0+9/;.$_()\r\n", Expect: "USING A-z0+9/;.$_()\r\n"},
			{Send: "use x_y\r\n", Expect: "USING x_y\r\n"},
			{Send: "watch x:y\r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "ignore \xc3\xa9\r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "stats-tube -a\r\n", Expect: "BAD_FORMAT\r\n"},
		}},
		{Name: "UseWatchIgnoreAndLists", Steps: []Step{
			{Send: "list-tubes\r\n", Expect: "OK 14\r\n---\n- default\n\r\n"},
			{Send: "watch w\r\n", Expect: "WATCHING 2\r\n"},
			{Send: "watch w\r\n", Expect: "WATCHING 2\r\n"},
			{Send: "use u\r\n", Expect: "USING u\r\n"},
			{Send: "list-tubes\r\n", Expect: "OK 22\r\n---\n- default\n- w\n- u\n\r\n"},
			{Send: "list-tube-used\r\n", Expect: "USING u\r\n"},
			{Send: "list-tubes-watched\r\n", Expect: "OK 18\r\n---\n- default\n- w\n\r\n"},
			{Send: "ignore nothere\r\n", Expect: "WATCHING 2\r\n"},
			{Send: "ignore default\r\n", Expect: "WATCHING 1\r\n"},
			{Send: "ignore w\r\n", Expect: "NOT_IGNORED\r\n"},
			{Send: "list-tubes-watched\r\n", Expect: "OK 8\r\n---\n- w\n\r\n"},
			{Send: "stats-tube nothere\r\n", Expect: "NOT_FOUND\r\n"},
		}},
		{Name: "WatchListOrderAfterIgnore", Steps: []Step{
			{Send: "watch a\r\nwatch b\r\nwatch c\r\n", Expect: "WATCHING 2\r\nWATCHING 3\r\nWATCHING 4\r\n"},
			{Send: "ignore a\r\n", Expect: "WATCHING 3\r\n"},
			{Send: "list-tubes-watched\r\n", Expect: "OK 22\r\n---\n- default\n- c\n- b\n\r\n"},
			{Send: "list-tubes\r\n", Expect: "OK 22\r\n---\n- default\n- c\n- b\n\r\n"},
			{Send: "watch a\r\n", Expect: "WATCHING 4\r\n"},
			{Send: "list-tubes-watched\r\n", Expect: "OK 26\r\n---\n- default\n- c\n- b\n- a\n\r\n"},
		}},
		{Name: "TubeVanishesWhenUnreferencedAndEmpty", Steps: []Step{
			{Send: "use t\r\n", Expect: "USING t\r\n"},
			{Send: "put 0 0 1 1\r\nx\r\n", Expect: "INSERTED 1\r\n"},
			{Send: "use default\r\n", Expect: "USING default\r\n"},
			{Send: "stats-tube t\r\n", Expect: "OK {n}\r\n---\nname: \"t\"\ncurrent-jobs-urgent: 1\ncurrent-jobs-ready: 1\ncurrent-jobs-reserved: 0\ncurrent-jobs-delayed: 0\ncurrent-jobs-buried: 0\ntotal-jobs: 1\ncurrent-using: 0\ncurrent-watching: 0\ncurrent-waiting: 0\ncmd-delete: 0\ncmd-pause-tube: 0\npause: 0\npause-time-left: 0\n\r\n"},
			{Send: "delete 1\r\n", Expect: "DELETED\r\n"},
			{Send: "stats-tube t\r\n", Expect: "NOT_FOUND\r\n"},
			{Send: "list-tubes\r\n", Expect: "OK 14\r\n---\n- default\n\r\n"},
		}},
		{Name: "ReserveOrderByPriorityThenId", Steps: []Step{
			{Send: "put 5 0 10 1\r\na\r\nput 3 0 10 1\r\nb\r\nput 3 0 10 1\r\nc\r\nput 9 0 10 1\r\nd\r\n",
				Expect: "INSERTED 1\r\nINSERTED 2\r\nINSERTED 3\r\nINSERTED 4\r\n"},
			{Send: "reserve\r\n", Expect: "RESERVED 2 1\r\nb\r\n"},
			{Send: "put 3 0 10 1\r\ne\r\n", Expect: "INSERTED 5\r\n"},
			{Send: "release 2 3 0\r\n", Expect: "RELEASED\r\n"},
			{Send: "reserve\r\n", Expect: "RESERVED 2 1\r\nb\r\n"},
			{Send: "reserve\r\n", Expect: "RESERVED 3 1\r\nc\r\n"},
			{Send: "reserve\r\n", Expect: "RESERVED 5 1\r\ne\r\n"},
			{Send: "reserve\r\n", Expect: "RESERVED 1 1\r\na\r\n"},
		}},
		{Name: "ReserveAcrossWatchedTubes", Steps: []Step{
			{Send: "use abc\r\nput 999999 0 10 1\r\nx\r\nuse def\r\nput 99 0 10 1\r\ny\r\n",
				Expect: "USING abc\r\nINSERTED 1\r\nUSING def\r\nINSERTED 2\r\n"},
			{Send: "watch abc\r\nwatch def\r\nreserve-with-timeout 0\r\n",
				Expect: "WATCHING 2\r\nWATCHING 3\r\nRESERVED 2 1\r\ny\r\n"},
		}},
		{Name: "ReserveWithTimeoutZeroPolls", Steps: []Step{
			{Send: "reserve-with-timeout 0\r\n", Expect: "TIMED_OUT\r\n"},
			{Send: "reserve-with-timeout 1\r\nlist-tube-used\r\n", Expect: "TIMED_OUT\r\nUSING default\r\n"},
		}},
		{Name: "ReserveWithTimeoutArgument113", Version: "1.13",
			Differs: "beanstalkd 1.12 parses the timeout with strtol (1.13 is strict)",
			Steps: []Step{
				{Send: "reserve-with-timeout -1\r\n", Expect: "BAD_FORMAT\r\n"},
				{Send: "reserve-with-timeout +1\r\n", Expect: "BAD_FORMAT\r\n"},
				{Send: "reserve-with-timeout \r\n", Expect: "BAD_FORMAT\r\n"},
				{Send: "reserve-with-timeout abc\r\n", Expect: "BAD_FORMAT\r\n"},
				{Send: "reserve-with-timeout 2147483648\r\n", Expect: "BAD_FORMAT\r\n"},
				{Send: "reserve-with-timeout 0x\r\n", Expect: "TIMED_OUT\r\n"},
				{Send: "reserve-with-timeout 0 1\r\n", Expect: "TIMED_OUT\r\n"},
			}},
		{Name: "BlockedReserveIsServedByAPut", Steps: []Step{
			{Conn: 0, Send: "reserve\r\n", Expect: ""},
			{Conn: 1, Send: "put 0 0 10 2\r\nhi\r\n", Expect: "INSERTED 1\r\n"},
			{Conn: 0, Expect: "RESERVED 1 2\r\nhi\r\n"},
		}},
		{Name: "CommandsAfterABlockedReserveWait", Steps: []Step{
			{Conn: 0, Send: "reserve\r\nlist-tube-used\r\n", Expect: ""},
			{Conn: 1, Send: "put 0 0 10 1\r\nx\r\n", Expect: "INSERTED 1\r\n"},
			{Conn: 0, Expect: "RESERVED 1 1\r\nx\r\nUSING default\r\n"},
		}},
		{Name: "CommandsSentDuringABlockedReserveWaitForIt", Steps: []Step{
			{Conn: 0, Send: "reserve\r\n", Expect: ""},
			{Conn: 0, Send: "list-tube-used\r\n", Expect: ""},
			{Conn: 1, Send: "put 0 0 10 1\r\nx\r\n", Expect: "INSERTED 1\r\n"},
			{Conn: 0, Expect: "RESERVED 1 1\r\nx\r\nUSING default\r\n"},
		}},
		{Name: "HalfCloseWhileWaitingTimesOut", Steps: []Step{
			{Conn: 0, Send: "reserve\r\n", Expect: "", Then: CloseWrite},
			{Conn: 0, Expect: "TIMED_OUT\r\n", Then: Closed},
		}},
		{Name: "PermissionsOfAnotherConnection", Steps: []Step{
			{Conn: 0, Send: "put 0 0 10 1\r\nx\r\nput 0 0 10 1\r\ny\r\n", Expect: "INSERTED 1\r\nINSERTED 2\r\n"},
			{Conn: 0, Send: "reserve\r\n", Expect: "RESERVED 1 1\r\nx\r\n"},
			{Conn: 1, Send: "delete 1\r\n", Expect: "NOT_FOUND\r\n"},
			{Conn: 1, Send: "release 1 0 0\r\n", Expect: "NOT_FOUND\r\n"},
			{Conn: 1, Send: "bury 1 0\r\n", Expect: "NOT_FOUND\r\n"},
			{Conn: 1, Send: "touch 1\r\n", Expect: "NOT_FOUND\r\n"},
			{Conn: 1, Send: "reserve-job 1\r\n", Expect: "NOT_FOUND\r\n"},
			{Conn: 1, Send: "peek 1\r\n", Expect: "FOUND 1 1\r\nx\r\n"},
			{Conn: 1, Send: "delete 2\r\n", Expect: "DELETED\r\n"},
			{Conn: 0, Send: "touch 1\r\n", Expect: "TOUCHED\r\n"},
			{Conn: 0, Send: "release 2 0 0\r\n", Expect: "NOT_FOUND\r\n"},
			{Conn: 0, Send: "delete 1\r\n", Expect: "DELETED\r\n"},
		}},
		{Name: "CloseReturnsReservedJobs", Steps: []Step{
			{Conn: 0, Send: "put 0 0 100 1\r\nx\r\n", Expect: "INSERTED 1\r\n"},
			{Conn: 0, Send: "reserve\r\n", Expect: "RESERVED 1 1\r\nx\r\n", Then: Close},
			{Conn: 1, Send: "reserve-with-timeout 1\r\n", Expect: "RESERVED 1 1\r\nx\r\n"},
			{Conn: 1, Send: "stats-job 1\r\n", Expect: "OK {n}\r\n---\nid: 1\ntube: \"default\"\nstate: reserved\npri: 0\nage: {n}\ndelay: 0\nttr: 100\ntime-left: {n}\nfile: 0\nreserves: 2\ntimeouts: 0\nreleases: 0\nburies: 0\nkicks: 0\n\r\n"},
		}},
		{Name: "QuitReturnsReservedJobsAndIgnoresTheRest", Steps: []Step{
			{Conn: 0, Send: "put 0 0 100 1\r\nx\r\n", Expect: "INSERTED 1\r\n"},
			{Conn: 0, Send: "reserve\r\nquit\r\nlist-tube-used\r\n", Expect: "RESERVED 1 1\r\nx\r\n", Then: Closed},
			{Conn: 1, Send: "reserve-with-timeout 1\r\n", Expect: "RESERVED 1 1\r\nx\r\n"},
		}},
		{Name: "QuitIsAPrefix", Steps: []Step{
			{Conn: 0, Send: "quitX\r\n", Then: Closed},
		}},
		{Name: "BuryPeekBuriedKick", Steps: []Step{
			{Send: "put 0 0 10 1\r\nx\r\n", Expect: "INSERTED 1\r\n"},
			{Send: "bury 1 0\r\n", Expect: "NOT_FOUND\r\n"},
			{Send: "reserve\r\n", Expect: "RESERVED 1 1\r\nx\r\n"},
			{Send: "bury 1 7\r\n", Expect: "BURIED\r\n"},
			{Send: "peek-buried\r\n", Expect: "FOUND 1 1\r\nx\r\n"},
			{Send: "kick-job 1\r\n", Expect: "KICKED\r\n"},
			{Send: "kick-job 1\r\n", Expect: "NOT_FOUND\r\n"},
			{Send: "peek-ready\r\n", Expect: "FOUND 1 1\r\nx\r\n"},
			{Send: "reserve\r\nbury 1 7\r\nkick 1\r\nkick 1\r\n", Expect: "RESERVED 1 1\r\nx\r\nBURIED\r\nKICKED 1\r\nKICKED 0\r\n"},
			{Send: "stats-job 1\r\n", Expect: "OK {n}\r\n---\nid: 1\ntube: \"default\"\nstate: ready\npri: 7\nage: {n}\ndelay: 0\nttr: 10\ntime-left: 0\nfile: 0\nreserves: 2\ntimeouts: 0\nreleases: 0\nburies: 2\nkicks: 2\n\r\n"},
		}},
		{Name: "KickPrefersBuriedAndIsLax", Steps: []Step{
			{Send: "put 0 100 10 1\r\na\r\nput 0 100 10 1\r\nb\r\nput 0 0 10 1\r\nc\r\n", Expect: "INSERTED 1\r\nINSERTED 2\r\nINSERTED 3\r\n"},
			{Send: "reserve\r\nbury 3 0\r\n", Expect: "RESERVED 3 1\r\nc\r\nBURIED\r\n"},
			{Send: "peek-delayed\r\n", Expect: "FOUND 1 1\r\na\r\n"},
			{Send: "kick 5\r\n", Expect: "KICKED 1\r\n"},
			{Send: "kick +1\r\n", Expect: "KICKED 1\r\n"},
			{Send: "kick 5abc\r\n", Expect: "KICKED 1\r\n"},
			{Send: "kick -1\r\n", Expect: "KICKED 0\r\n"},
			{Send: "kick  \t5\r\n", Expect: "KICKED 0\r\n"},
			{Send: "kick 4294967296\r\n", Expect: "KICKED 0\r\n"},
			{Send: "kick abc\r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "kick 18446744073709551616\r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "kick\r\n", Expect: "UNKNOWN_COMMAND\r\n"},
			{Send: "kick \r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "peek-delayed\r\n", Expect: "NOT_FOUND\r\n"},
			{Send: "kick-job 3\r\n", Expect: "NOT_FOUND\r\n"},
		}},
		{Name: "ReserveJobFromEveryState", Steps: []Step{
			{Send: "put 0 100 10 1\r\na\r\nput 0 0 10 1\r\nb\r\n", Expect: "INSERTED 1\r\nINSERTED 2\r\n"},
			{Send: "reserve-job 1\r\n", Expect: "RESERVED 1 1\r\na\r\n"},
			{Send: "reserve-job 1\r\n", Expect: "NOT_FOUND\r\n"},
			{Send: "bury 1 0\r\nreserve-job 1\r\n", Expect: "BURIED\r\nRESERVED 1 1\r\na\r\n"},
			{Send: "release 1 0 0\r\nreserve-job 2\r\n", Expect: "RELEASED\r\nRESERVED 2 1\r\nb\r\n"},
			{Send: "reserve-job 99\r\n", Expect: "NOT_FOUND\r\n"},
		}},
		{Name: "DeleteInAnyUnreservedState", Steps: []Step{
			{Send: "put 0 100 10 1\r\na\r\nput 0 0 10 1\r\nb\r\nput 0 0 10 1\r\nc\r\n", Expect: "INSERTED 1\r\nINSERTED 2\r\nINSERTED 3\r\n"},
			{Send: "reserve-job 3\r\nbury 3 0\r\n", Expect: "RESERVED 3 1\r\nc\r\nBURIED\r\n"},
			{Send: "delete 1\r\ndelete 2\r\ndelete 3\r\n", Expect: "DELETED\r\nDELETED\r\nDELETED\r\n"},
		}},
		{Name: "TTRZeroBecomesOne", Steps: []Step{
			{Send: "put 0 0 0 1\r\nx\r\n", Expect: "INSERTED 1\r\n"},
			{Send: "reserve\r\n", Expect: "RESERVED 1 1\r\nx\r\n"},
			{Send: "reserve-with-timeout 5\r\n", Expect: "DEADLINE_SOON\r\n"},
			{Send: "release 1 0 0\r\n", Expect: "RELEASED\r\n"},
		}},
		{Name: "DeadlineSoonLosesToAReadyJob", Steps: []Step{
			{Send: "put 0 0 1 1\r\nx\r\nput 0 0 1 1\r\ny\r\n", Expect: "INSERTED 1\r\nINSERTED 2\r\n"},
			{Send: "reserve\r\nreserve\r\n", Expect: "RESERVED 1 1\r\nx\r\nRESERVED 2 1\r\ny\r\n"},
			{Send: "reserve\r\n", Expect: "DEADLINE_SOON\r\n"},
		}},
		{Name: "PauseTube", Steps: []Step{
			{Send: "pause-tube nothere 1\r\n", Expect: "NOT_FOUND\r\n"},
			{Send: "pause-tube -x 1\r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "pause-tube default x\r\n", Expect: "BAD_FORMAT\r\n"},
			{Send: "put 0 0 10 1\r\nx\r\n", Expect: "INSERTED 1\r\n"},
			{Send: "pause-tube  default   100\r\n", Expect: "PAUSED\r\n"},
			{Send: "reserve-with-timeout 0\r\n", Expect: "TIMED_OUT\r\n"},
			{Send: "peek-ready\r\n", Expect: "FOUND 1 1\r\nx\r\n"},
			{Send: "stats-tube default\r\n", Expect: "OK {n}\r\n---\nname: \"default\"\ncurrent-jobs-urgent: 1\ncurrent-jobs-ready: 1\ncurrent-jobs-reserved: 0\ncurrent-jobs-delayed: 0\ncurrent-jobs-buried: 0\ntotal-jobs: 1\ncurrent-using: 1\ncurrent-watching: 1\ncurrent-waiting: 0\ncmd-delete: 0\ncmd-pause-tube: 1\npause: 100\npause-time-left: {n}\n\r\n"},
			{Send: "pause-tubedefault 0\r\n", Expect: "PAUSED\r\n"},
			{Send: "reserve-with-timeout 0\r\n", Expect: "RESERVED 1 1\r\nx\r\n"},
		}},
		{Name: "UnpauseServesABlockedReserve", Steps: []Step{
			{Conn: 0, Send: "put 0 0 10 1\r\nx\r\npause-tube default 86400\r\n", Expect: "INSERTED 1\r\nPAUSED\r\n"},
			{Conn: 1, Send: "reserve\r\n", Expect: ""},
			{Conn: 0, Send: "pause-tube default 0\r\n", Expect: "PAUSED\r\n"},
			{Conn: 1, Expect: "RESERVED 1 1\r\nx\r\n"},
		}},
		{Name: "DelayedJobBecomesReady", Steps: []Step{
			{Send: "put 0 1 10 1\r\nx\r\n", Expect: "INSERTED 1\r\n"},
			{Send: "reserve-with-timeout 0\r\n", Expect: "TIMED_OUT\r\n"},
			{Send: "reserve-with-timeout 3\r\n", Expect: "RESERVED 1 1\r\nx\r\n"},
		}},
		{Name: "TTRExpiryOnAnIdleConnection",
			Differs: "beanstalkd can leave a reserved job stuck past its TTR while its owner is idle (docs/protocol.md §3.6; seen in our differential runs)",
			Steps: []Step{
				{Conn: 0, Send: "put 0 0 1 1\r\nx\r\n", Expect: "INSERTED 1\r\n"},
				{Conn: 0, Send: "reserve\r\n", Expect: "RESERVED 1 1\r\nx\r\n"},
				{Conn: 1, Send: "reserve-with-timeout 3\r\n", Expect: "RESERVED 1 1\r\nx\r\n"},
				{Conn: 1, Send: "stats-job 1\r\n", Expect: "OK {n}\r\n---\nid: 1\ntube: \"default\"\nstate: reserved\npri: 0\nage: {n}\ndelay: 0\nttr: 1\ntime-left: 0\nfile: 0\nreserves: 2\ntimeouts: 1\nreleases: 0\nburies: 0\nkicks: 0\n\r\n"},
			}},
		{Name: "StatsKeysInOrder", Steps: []Step{
			{Send: "stats\r\n", Expect: "OK {n}\r\n---\ncurrent-jobs-urgent: 0\ncurrent-jobs-ready: 0\ncurrent-jobs-reserved: 0\ncurrent-jobs-delayed: 0\ncurrent-jobs-buried: 0\ncmd-put: 0\ncmd-peek: 0\ncmd-peek-ready: 0\ncmd-peek-delayed: 0\ncmd-peek-buried: 0\ncmd-reserve: 0\ncmd-reserve-with-timeout: 0\ncmd-delete: 0\ncmd-release: 0\ncmd-use: 0\ncmd-watch: 0\ncmd-ignore: 0\ncmd-bury: 0\ncmd-kick: 0\ncmd-touch: 0\ncmd-stats: 1\ncmd-stats-job: 0\ncmd-stats-tube: 0\ncmd-list-tubes: 0\ncmd-list-tube-used: 0\ncmd-list-tubes-watched: 0\ncmd-pause-tube: 0\njob-timeouts: 0\ntotal-jobs: 0\nmax-job-size: 65535\ncurrent-tubes: 1\ncurrent-connections: 1\ncurrent-producers: 0\ncurrent-workers: 0\ncurrent-waiting: 0\ntotal-connections: {n}\npid: {n}\nversion: \"{*}\nrusage-utime: {n}.{n}\nrusage-stime: {n}.{n}\nuptime: {n}\nbinlog-oldest-index: 0\nbinlog-current-index: 0\nbinlog-records-migrated: 0\nbinlog-records-written: 0\nbinlog-max-size: 10485760\ndraining: false\nid: {*}\nhostname: {*}\nos: {*}\nplatform: {*}\n\r\n"},
		}},
		{Name: "CountersMoveAsBeanstalkdMovesThem", Steps: []Step{
			{Conn: 0, Send: "put 0 0 1 1\r\nxy\r\n", Expect: "EXPECTED_CRLF\r\n"},
			{Conn: 1, Send: "reserve-job 99\r\nreserve-with-timeout 0\r\ndelete 99\r\npeek 99\r\nkick-job 99\r\nignore x\r\nuse default\r\n",
				Expect: "NOT_FOUND\r\nTIMED_OUT\r\nNOT_FOUND\r\nNOT_FOUND\r\nNOT_FOUND\r\nWATCHING 1\r\nUSING default\r\n"},
			{Conn: 2, Send: "pause-tube -x 0\r\npause-tube default x\r\n", Expect: "BAD_FORMAT\r\nBAD_FORMAT\r\n"},
			{Conn: 2, Send: "stats\r\n", Expect: "OK {n}\r\n---\ncurrent-jobs-urgent: 0\ncurrent-jobs-ready: 0\ncurrent-jobs-reserved: 0\ncurrent-jobs-delayed: 0\ncurrent-jobs-buried: 0\ncmd-put: 1\ncmd-peek: 1\ncmd-peek-ready: 0\ncmd-peek-delayed: 0\ncmd-peek-buried: 0\ncmd-reserve: 0\ncmd-reserve-with-timeout: 1\ncmd-delete: 1\ncmd-release: 0\ncmd-use: 1\ncmd-watch: 0\ncmd-ignore: 1\ncmd-bury: 0\ncmd-kick: 0\ncmd-touch: 0\ncmd-stats: 1\ncmd-stats-job: 0\ncmd-stats-tube: 0\ncmd-list-tubes: 0\ncmd-list-tube-used: 0\ncmd-list-tubes-watched: 0\ncmd-pause-tube: 1\njob-timeouts: 0\ntotal-jobs: 0\nmax-job-size: 65535\ncurrent-tubes: 1\ncurrent-connections: 3\ncurrent-producers: 1\ncurrent-workers: 1\ncurrent-waiting: 0\ntotal-connections: {n}\n{*}\n{*}\n{*}\n{*}\n{*}\n{*}\n{*}\n{*}\n{*}\n{*}\ndraining: false\n{*}\n{*}\n{*}\n{*}\n\r\n"},
		}},
		{Name: "WaitingIsCountedPerTube", Steps: []Step{
			{Conn: 0, Send: "watch w\r\n", Expect: "WATCHING 2\r\n"},
			{Conn: 0, Send: "reserve\r\n", Expect: ""},
			{Conn: 1, Send: "stats-tube w\r\n", Expect: "OK {n}\r\n---\nname: \"w\"\ncurrent-jobs-urgent: 0\ncurrent-jobs-ready: 0\ncurrent-jobs-reserved: 0\ncurrent-jobs-delayed: 0\ncurrent-jobs-buried: 0\ntotal-jobs: 0\ncurrent-using: 0\ncurrent-watching: 1\ncurrent-waiting: 1\ncmd-delete: 0\ncmd-pause-tube: 0\npause: 0\npause-time-left: 0\n\r\n"},
			{Conn: 1, Send: "use w\r\nput 0 0 5 1\r\nx\r\n", Expect: "USING w\r\nINSERTED 1\r\n"},
			{Conn: 0, Expect: "RESERVED 1 1\r\nx\r\n"},
		}},
		{Name: "LargeBodyAtTheLimit", Steps: []Step{
			{Send: "put 0 0 10 65535\r\n" + strings.Repeat("b", 65535) + "\r\n", Expect: "INSERTED 1\r\n"},
			{Send: "put 0 0 10 65536\r\n" + strings.Repeat("b", 65536) + "\r\n", Expect: "JOB_TOO_BIG\r\n"},
			{Send: "reserve\r\n", Expect: "RESERVED 1 65535\r\n" + strings.Repeat("b", 65535) + "\r\n"},
		}},
		{Name: "ShortDelayIsNotLost", Steps: []Step{
			{Conn: 0, Send: "put 1 1 10 1\r\na\r\n", Expect: "INSERTED 1\r\n"},
			{Conn: 1, Send: "reserve\r\n", Expect: ""},
			{Conn: 1, Expect: "RESERVED 1 1\r\na\r\n", Sleep: 900 * time.Millisecond},
		}},
	}
}

// OrderTranscripts check beanstalkd's list-tubes order after tubes were removed. The memory
// backend reproduces it; shared stores (Redis, PostgreSQL) keep their own order, which the
// compatibility page allows (docs/compatibility.md), so these are not in Transcripts.
func OrderTranscripts() []Transcript {
	return []Transcript{
		// A closing conn drops its tube references as beanstalkd does: the watch list first, in
		// the order its array removal gives (entry 0, then the last moved into its place, ...),
		// then the used tube; each emptied tube leaves list-tubes by swap-with-last
		// (docs/protocol.md §4.2, §4.4). Quit waits for the close, so the drop must come first.
		{Name: "CloseDropsTheUsedTubeAfterTheWatchList", Steps: []Step{
			{Conn: 0, Send: "use u\r\nwatch a\r\nwatch b\r\nwatch c\r\n", Expect: "USING u\r\nWATCHING 2\r\nWATCHING 3\r\nWATCHING 4\r\n"},
			{Conn: 1, Send: "use z\r\nput 0 0 10 1\r\nx\r\nuse y\r\nput 0 0 10 1\r\nx\r\n", Expect: "USING z\r\nINSERTED 1\r\nUSING y\r\nINSERTED 2\r\n"},
			{Conn: 0, Send: "quit\r\n", Then: Closed},
			{Conn: 1, Send: "list-tubes\r\n", Expect: "OK 22\r\n---\n- default\n- z\n- y\n\r\n"},
		}},
		{Name: "CloseDropsTheWatchListInBeanstalkdsOrder", Steps: []Step{
			{Conn: 0, Send: "watch a\r\nwatch b\r\nwatch c\r\nwatch d\r\n", Expect: "WATCHING 2\r\nWATCHING 3\r\nWATCHING 4\r\nWATCHING 5\r\n"},
			{Conn: 1, Send: "use z\r\nput 0 0 10 1\r\nx\r\nuse y\r\nput 0 0 10 1\r\nx\r\nuse x\r\nput 0 0 10 1\r\nx\r\n",
				Expect: "USING z\r\nINSERTED 1\r\nUSING y\r\nINSERTED 2\r\nUSING x\r\nINSERTED 3\r\n"},
			{Conn: 0, Send: "quit\r\n", Then: Closed},
			{Conn: 1, Send: "list-tubes\r\n", Expect: "OK 26\r\n---\n- default\n- x\n- z\n- y\n\r\n"},
		}},
	}
}
