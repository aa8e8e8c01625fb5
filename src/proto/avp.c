/*
 * src/proto/avp.c - the per-AVP rules of RFC 3931 5.4 as one table.
 *
 * Lengths are of the attribute value (the AVP length minus its 6-octet
 * header), after unhiding.  Variable-length values are bounded by what fits
 * in an AVP; the nonce by what struct l2tp_auth can store.
 */
#include <stddef.h>

#include "avp.h"
#include "msg.h"

#define VAR_MAX		(L2TP_AVP_MAX_LEN - L2TP_AVP_HDR_LEN)

#define HIDE		L2TP_AVPR_HIDE_OK
#define M		L2TP_AVPR_SEND_M
#define REPEAT		L2TP_AVPR_REPEAT
#define IGNORE		L2TP_AVPR_IGNORE
#define RECV_ONLY	L2TP_AVPR_RECV_ONLY

#define FIXED(n, len, fl)	{ n, len, len, fl }
#define VAR(n, min, max, fl)	{ n, min, max, fl }
/* RFC 2661 AVPs with no meaning in L2TPv3: recognised so M=1 does not matter. */
#define V2(n)			{ n, 0, VAR_MAX, IGNORE | REPEAT }

static const struct l2tp_avp_rule rules[L2TP_AVP_MAX_KNOWN + 1] = {
	[L2TP_AVP_MESSAGE_TYPE]		= FIXED("Message Type", 2, M),
	/* result code, then optional error code and message: 3 octets is caught apart */
	[L2TP_AVP_RESULT_CODE]		= VAR("Result Code", 2, VAR_MAX, M),
	[L2TP_AVP_PROTOCOL_VERSION]	= V2("Protocol Version"),
	[L2TP_AVP_FRAMING_CAP]		= V2("Framing Capabilities"),
	[L2TP_AVP_BEARER_CAP]		= V2("Bearer Capabilities"),
	[L2TP_AVP_TIE_BREAKER]		= FIXED("Tie Breaker", 8, M),
	/* not in RFC 3931, but Cisco sends it in v3 SCCRQ/SCCRP: keep the value */
	[L2TP_AVP_FIRMWARE_REVISION]	= FIXED("Firmware Revision", 2, HIDE),
	[L2TP_AVP_HOST_NAME]		= VAR("Host Name", 1, VAR_MAX, M),
	[L2TP_AVP_VENDOR_NAME]		= VAR("Vendor Name", 0, VAR_MAX, HIDE),
	[L2TP_AVP_ASSIGNED_TUNNEL_ID]	= V2("Assigned Tunnel ID"),
	[L2TP_AVP_RECV_WINDOW_SIZE]	= FIXED("Receive Window Size", 2, M),
	[L2TP_AVP_CHALLENGE]		= V2("Challenge"),
	[L2TP_AVP_Q931_CAUSE]		= V2("Q.931 Cause Code"),
	[L2TP_AVP_CHALLENGE_RESPONSE]	= V2("Challenge Response"),
	[L2TP_AVP_ASSIGNED_SESSION_ID]	= V2("Assigned Session ID"),
	[L2TP_AVP_SERIAL_NUMBER]	= FIXED("Serial Number", 4, HIDE),
	[L2TP_AVP_MIN_BPS]		= V2("Minimum BPS"),
	[L2TP_AVP_MAX_BPS]		= V2("Maximum BPS"),
	[L2TP_AVP_BEARER_TYPE]		= V2("Bearer Type"),
	[L2TP_AVP_FRAMING_TYPE]		= V2("Framing Type"),
	[L2TP_AVP_CALLED_NUMBER]	= V2("Called Number"),
	[L2TP_AVP_CALLING_NUMBER]	= V2("Calling Number"),
	[L2TP_AVP_SUB_ADDRESS]		= V2("Sub-Address"),
	/* the L2TPv2 4-octet speeds, still sent in ICCN by some peers */
	[L2TP_AVP_TX_CONNECT_SPEED]	= FIXED("Tx Connect Speed (v2)", 4, HIDE | RECV_ONLY),
	[L2TP_AVP_PHYSICAL_CHANNEL_ID]	= FIXED("Physical Channel ID", 4, HIDE),
	[L2TP_AVP_INITIAL_RCVD_LCP]	= V2("Initial Received LCP CONFREQ"),
	[L2TP_AVP_LAST_SENT_LCP]	= V2("Last Sent LCP CONFREQ"),
	[L2TP_AVP_LAST_RCVD_LCP]	= V2("Last Received LCP CONFREQ"),
	[L2TP_AVP_PROXY_AUTHEN_TYPE]	= V2("Proxy Authen Type"),
	[L2TP_AVP_PROXY_AUTHEN_NAME]	= V2("Proxy Authen Name"),
	[L2TP_AVP_PROXY_AUTHEN_CHALLENGE] = V2("Proxy Authen Challenge"),
	[L2TP_AVP_PROXY_AUTHEN_ID]	= V2("Proxy Authen ID"),
	[L2TP_AVP_PROXY_AUTHEN_RESPONSE] = V2("Proxy Authen Response"),
	/* 2 reserved octets and six 4-octet counters */
	[L2TP_AVP_CIRCUIT_ERRORS]	= FIXED("Circuit Errors", 26, HIDE),
	[L2TP_AVP_ACCM]			= V2("ACCM"),
	[L2TP_AVP_RANDOM_VECTOR]	= VAR("Random Vector", 0, VAR_MAX, M | REPEAT),
	[L2TP_AVP_PRIVATE_GROUP_ID]	= V2("Private Group ID"),
	[L2TP_AVP_RX_CONNECT_SPEED]	= FIXED("Rx Connect Speed (v2)", 4, HIDE | RECV_ONLY),
	[L2TP_AVP_SEQUENCING_REQUIRED]	= V2("Sequencing Required"),
	/* a vendor AVP in disguise: the decoder treats it as one */
	[L2TP_AVP_EXTENDED_VENDOR_ID]	= VAR("Extended Vendor ID", 6, VAR_MAX, REPEAT | RECV_ONLY),
	/* digest type and 16 (MD5) or 20 (SHA-1) octets; two during key rollover */
	[L2TP_AVP_MESSAGE_DIGEST]	= VAR("Message Digest", 17, 21, M | REPEAT),
	[L2TP_AVP_ROUTER_ID]		= FIXED("Router ID", 4, M),
	[L2TP_AVP_ASSIGNED_CCID]	= FIXED("Assigned Control Connection ID", 4, M | HIDE),
	[L2TP_AVP_PW_CAP_LIST]		= VAR("Pseudowire Capabilities List", 2, VAR_MAX - 1, M | HIDE),
	[L2TP_AVP_LOCAL_SESSION_ID]	= FIXED("Local Session ID", 4, M | HIDE),
	[L2TP_AVP_REMOTE_SESSION_ID]	= FIXED("Remote Session ID", 4, M | HIDE),
	/* 0, 4 or 8: other sizes are a bad value, not a bad length (msg.h) */
	[L2TP_AVP_ASSIGNED_COOKIE]	= VAR("Assigned Cookie", 0, 8, M | HIDE),
	[L2TP_AVP_REMOTE_END_ID]	= VAR("Remote End ID", 0, VAR_MAX, M | HIDE),
	[L2TP_AVP_PW_TYPE]		= FIXED("Pseudowire Type", 2, M | HIDE),
	[L2TP_AVP_L2_SPECIFIC_SUBLAYER]	= FIXED("L2-Specific Sublayer", 2, M | HIDE),
	[L2TP_AVP_DATA_SEQUENCING]	= FIXED("Data Sequencing", 2, M | HIDE),
	[L2TP_AVP_CIRCUIT_STATUS]	= FIXED("Circuit Status", 2, M | HIDE),
	[L2TP_AVP_PREFERRED_LANGUAGE]	= VAR("Preferred Language", 0, VAR_MAX, HIDE),
	[L2TP_AVP_CTRL_MSG_AUTH_NONCE]	= VAR("Control Message Authentication Nonce", 0,
					      L2TP_NONCE_MAX, M),
	[L2TP_AVP_TX_CONNECT_SPEED_BPS]	= FIXED("Tx Connect Speed", 8, HIDE),
	[L2TP_AVP_RX_CONNECT_SPEED_BPS]	= FIXED("Rx Connect Speed", 8, HIDE),
	/* RFC 4951: flags (C, D), then the Recovery Time in ms */
	[L2TP_AVP_FAILOVER_CAP]		= FIXED("Failover Capability", 6, HIDE),
	/* reserved, then the sender's and the recipient's 32-bit CCIDs; never hidden */
	[L2TP_AVP_TUNNEL_RECOVERY]	= FIXED("Tunnel Recovery", 10, M),
	/*
	 * reserved, Suggested Ns and Nr (16 bits each); 10 octets (two 32-bit
	 * values, as OpenRPD writes it) is accepted too
	 */
	[L2TP_AVP_SUGGESTED_CTRL_SEQ]	= VAR("Suggested Control Sequence", 6, 10, HIDE),
	/* reserved, the sender's Session ID, then the recipient's; one per session */
	[L2TP_AVP_FAILOVER_SESSION]	= FIXED("Failover Session State", 10, M | HIDE | REPEAT),
};

const struct l2tp_avp_rule *l2tp_avp_rule(uint16_t type)
{
	if (type > L2TP_AVP_MAX_KNOWN || rules[type].name == NULL)
		return NULL;
	return &rules[type];
}

const char *l2tp_avp_name(uint16_t type)
{
	const struct l2tp_avp_rule *r = l2tp_avp_rule(type);

	return r ? r->name : NULL;
}

/*
 * Cisco's draft-era AVPs: 1 Assigned Connection ID, 2 PW Capabilities List,
 * 3 Local Session ID, 4 Remote Session ID, 5 Assigned Cookie, 6 Remote End
 * ID, 7 PW Type, 8 Circuit Status, 9 Session Tie Breaker, 10 Draft AVP
 * Version.  Each duplicates an IETF AVP sent beside it (or names the draft),
 * so we know what they mean and can ignore them whatever their M bit.
 * Their draft nonce and digest are left out on purpose: ignoring a peer
 * that asks for authentication would be wrong, so those stay "unknown".
 */
bool l2tp_avp_vendor_ignored(uint16_t vendor, uint16_t type)
{
	return vendor == L2TP_VENDOR_CISCO && type >= 1 && type <= 10;
}

/* Every type in IANA's "L2TPv3 Pseudowire Types" registry, and the kernel's PPP AC. */
const char *l2tp_pw_type_name(uint16_t pw)
{
	switch (pw) {
	case 0x0001:		return "Frame Relay DLCI";
	case 0x0002:		return "ATM AAL5 SDU VCC transport";
	case 0x0003:		return "ATM Cell transparent Port Mode";
	case L2TP_PW_ETH_VLAN:	return "Ethernet VLAN";
	case L2TP_PW_ETH:	return "Ethernet";
	case 0x0006:		return "HDLC";
	case L2TP_PW_PPP:	return "PPP";
	case L2TP_PW_PPP_AC:	return "PPP AC";
	case 0x0009:		return "ATM Cell transport VCC Mode";
	case 0x000a:		return "ATM Cell transport VPC Mode";
	case L2TP_PW_IP:	return "IP";
	case 0x000c:		return "MPEG-TS Payload Type (DEPI MPT)";
	case 0x000d:		return "Packet Streaming Protocol (DEPI PSP)";
	case 0x0011:		return "Structure-agnostic E1 circuit";
	case 0x0012:		return "Structure-agnostic T1 (DS1) circuit";
	case 0x0013:		return "Structure-agnostic E3 circuit";
	case 0x0014:		return "Structure-agnostic T3 (DS3) circuit";
	case 0x0015:		return "CESoPSN basic mode";
	case 0x0017:		return "CESoPSN TDM with CAS";
	default:		return "unknown";
	}
}
