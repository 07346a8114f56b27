/**
 * The vendor managed ruleset (id `efb7b8c9…`, the hosted "Cloudflare Managed Ruleset"'s
 * id, so an `execute` rule written for the hosted service deploys this one here).
 *
 * The hosted ruleset's expressions are private (reference crs-and-managed-rules §4.4), so
 * every detection below is our own, written for well-known exploits from their public
 * descriptions. Descriptions follow the hosted ruleset's style (`Product - Attack - CVE:…`),
 * categories are product tags (`wordpress`, `php`, `java`, …), attack classes (`rce`,
 * `sqli`, `xss`, `lfi`, `scanner`, …) and CVE tags (`cve-2021-44228`).
 *
 * How the expressions look at a request:
 * - URL parts are read from the `raw.*` fields, URL-decoded recursively and lower-cased,
 *   so neither percent-encoding (`%2e%2e%2f`, `%252e`), nor case, nor the edge's URL
 *   normalization (which removes `../` segments) hides a payload.
 * - Headers are walked with `any(…[*])`; the body is read decoded and lower-cased.
 * - Regexes are RE2-safe (no look-around, no back references): linear time.
 *
 * Each rule has a test request that triggers it and one that does not, in
 * `test/fixtures/vendor/<ref>.http`.
 */
import { mintId, VENDOR_RULESET_ID } from '../rulesets/managedIds';
import type { ManagedRule, ManagedRuleset, ManagedRulesetVersion } from '../rulesets/catalog';

// Where to look, decoded and lower-cased.
/** Path and query string. */
const URI = 'lower(url_decode(raw.http.request.uri, "r"))';
const PATH = 'lower(url_decode(raw.http.request.uri.path, "r"))';
const QUERY = 'lower(url_decode(raw.http.request.uri.query, "r"))';
const BODY = 'lower(url_decode(http.request.body.raw, "r"))';
const UA = 'lower(http.user_agent)';
/** Every header value, as an array: use inside `any(…)`. */
const HEADERS = 'lower(url_decode(http.request.headers.values[*], "r")[*])[*]';
/** Every header name, lower-cased, as an array: use inside `any(…)`. */
const HEADER_NAMES = 'lower(http.request.headers.names[*])[*]';

type VendorVersion = '1' | '2';

interface VendorRuleSpec {
  readonly ref: string;
  readonly description: string;
  readonly categories: readonly string[];
  readonly expression: string;
  /** Default `block`. */
  readonly action?: 'block' | 'log';
  /** Default true. */
  readonly enabled?: boolean;
  /** The ruleset version that added the rule. */
  readonly since: VendorVersion;
}

/** The ruleset's versions, oldest first, with fixed timestamps (tests depend on them). */
export const VENDOR_VERSIONS: readonly { readonly version: VendorVersion; readonly last_updated: string }[] = [
  { version: '1', last_updated: '2024-03-04T10:00:00.000000Z' },
  { version: '2', last_updated: '2024-07-15T10:00:00.000000Z' },
];

const LOG4J_LOOKUP = String.raw`\$\{(?:jndi:|[a-z]{0,16}\$\{[a-z0-9]{0,16}:)`;
const CMD = String.raw`(?:cat|id|whoami|uname|wget|curl|nc|ncat|bash|sh|ping|nslookup|powershell|cmd)`;
const SQLI_TAUTOLOGY = String.raw`['\x22\x60)]\s*(?:or|and|xor|\|\||&&)\s+(?:'?[a-z0-9_]+'?\s*(?:=|<>|!=|<=>|\blike\b)\s*'?[a-z0-9_]+|true\b|not\s+false\b)`;
const SQLI_UNION = String.raw`\bunion(?:\s|/\*.*?\*/|\()+(?:(?:all|distinct)(?:\s|/\*.*?\*/)+)?select\b`;
const XSS_EVENT = String.raw`<[a-z][^>]*[\s/'\x22](?:onerror|onload|onmouseover|onmouseenter|onfocus|onblur|onclick|onanimationstart|onpointerover|onbegin|onpageshow)\s*=`;

const SPECS: readonly VendorRuleSpec[] = [
  // --- Apache Log4j (Log4Shell) -------------------------------------------------------
  {
    ref: 'log4shell-uri',
    description: 'Apache Log4j - Remote Code Execution - URI - CVE:CVE-2021-44228',
    categories: ['java', 'log4j', 'rce', 'cve-2021-44228'],
    since: '1',
    // `${jndi:…}`, and nested lookups that spell it out: `${${lower:j}ndi:`, `${${::-j}…`, `${j${env:X:-n}di:`.
    expression: `${URI} matches r"${LOG4J_LOOKUP}"`,
  },
  {
    ref: 'log4shell-header',
    description: 'Apache Log4j - Remote Code Execution - Header - CVE:CVE-2021-44228',
    categories: ['java', 'log4j', 'rce', 'cve-2021-44228'],
    since: '1',
    expression: `any(${HEADERS} matches r"${LOG4J_LOOKUP}")`,
  },
  {
    ref: 'log4shell-body',
    description: 'Apache Log4j - Remote Code Execution - Body - CVE:CVE-2021-44228',
    categories: ['java', 'log4j', 'rce', 'cve-2021-44228'],
    since: '1',
    expression: String.raw`${BODY} matches r"(?:\$|\\u0024)(?:\{|\\u007b)(?:jndi:|[a-z]{0,16}(?:\$|\\u0024)(?:\{|\\u007b)[a-z0-9]{0,16}:)"`,
  },
  // --- Spring -------------------------------------------------------------------------
  {
    ref: 'spring4shell',
    description: 'Spring Framework - Remote Code Execution - CVE:CVE-2022-22965',
    categories: ['java', 'spring', 'rce', 'cve-2022-22965'],
    since: '1',
    // Data binding reaching the class loader: class.module.classLoader.resources.context.parent.pipeline…
    expression: String.raw`${QUERY} matches r"class(?:\.|\[)module(?:\.|\]\[?)classloader" or ${BODY} matches r"class(?:\.|\[)module(?:\.|\]\[?)classloader"`,
  },
  {
    ref: 'spring-cloud-function-spel',
    description: 'Spring Cloud Function - Remote Code Execution - CVE:CVE-2022-22963',
    categories: ['java', 'spring', 'rce', 'cve-2022-22963'],
    since: '2',
    // A SpEL routing expression in a request header.
    expression: `any(${HEADER_NAMES} eq "spring.cloud.function.routing-expression")`,
  },
  {
    ref: 'text4shell',
    description: 'Apache Commons Text - Remote Code Execution - CVE:CVE-2022-42889',
    categories: ['java', 'apache-commons-text', 'rce', 'cve-2022-42889'],
    since: '2',
    expression: String.raw`${URI} matches r"\$\{(?:script|dns|url):" or ${BODY} matches r"\$\{(?:script|dns|url):" or any(${HEADERS} matches r"\$\{(?:script|dns|url):")`,
  },
  // --- Bash -------------------------------------------------------------------------
  {
    ref: 'shellshock-header',
    description: 'Bash - Remote Code Execution - Shellshock - CVE:CVE-2014-6271',
    categories: ['bash', 'cgi', 'rce', 'cve-2014-6271', 'cve-2014-7169'],
    since: '1',
    // A header value that bash would read as a function definition: `() { :; }; …`.
    expression: String.raw`any(http.request.headers.values[*] matches r"^\s*\(\s*\)\s*\{")`,
  },
  // --- Apache Struts ----------------------------------------------------------------
  {
    ref: 'struts-content-type-ognl',
    description: 'Apache Struts - Remote Code Execution - Content-Type - CVE:CVE-2017-5638',
    categories: ['java', 'apache-struts', 'rce', 'cve-2017-5638'],
    since: '1',
    // An OGNL expression (`%{…}`, `${…}`) in Content-Type; no media type contains one.
    expression: String.raw`any(http.request.headers["content-type"][*] matches r"[%$]\{") or any(url_decode(http.request.headers["content-type"][*], "r")[*] matches r"[%$]\{")`,
  },
  {
    ref: 'struts-namespace-ognl',
    description: 'Apache Struts - Remote Code Execution - Namespace - CVE:CVE-2018-11776',
    categories: ['java', 'apache-struts', 'rce', 'cve-2018-11776'],
    since: '1',
    // OGNL in the namespace part of the path: /${(…)}/actionChain1.action
    expression: String.raw`${PATH} matches r"[$%]\{.*\}.*\.action$"`,
  },
  {
    ref: 'struts-file-upload-traversal',
    description: 'Apache Struts - Remote Code Execution - CVE:CVE-2023-50164',
    categories: ['java', 'apache-struts', 'rce', 'lfi', 'cve-2023-50164'],
    since: '2',
    // A `…FileName` upload parameter that walks out of the upload directory.
    expression: String.raw`${QUERY} matches r"(?:^|&)[a-z0-9_.\[\]]*filename=[^&]*\.\.[/\\]" or ${BODY} matches r"name=\x22[a-z0-9_.\[\]]*filename\x22\s+\.\.[/\\]" or ${BODY} matches r"(?:^|&)[a-z0-9_.\[\]]*filename=[^&]*\.\.[/\\]"`,
  },
  // --- Atlassian Confluence ---------------------------------------------------------
  {
    ref: 'confluence-ognl-path',
    description: 'Atlassian Confluence - Code Injection - CVE:CVE-2022-26134',
    categories: ['java', 'atlassian-confluence', 'rce', 'cve-2022-26134'],
    since: '1',
    // An OGNL expression as a path segment: /${@java.lang.Runtime@getRuntime().exec("id")}/
    expression: String.raw`${PATH} matches r"\$\{[^}]*[@#(]"`,
  },
  {
    ref: 'confluence-ognl-querystring',
    description: 'Atlassian Confluence - Code Injection - CVE:CVE-2021-26084',
    categories: ['java', 'atlassian-confluence', 'rce', 'cve-2021-26084'],
    since: '1',
    // queryString=aaa\u0027+#{…}+\u0027 on the page-variables actions.
    expression: String.raw`${PATH} matches r"(?:doenterpagevariables|createpage-entervariables|createpage|viewpagetemplate)\.action|/templates/editor-preload-container|/users/user-dark-features" and (${QUERY} matches r"(?:querystring|linkcreation)=[^&]*(?:\\u0027|\\x27|#\{|\$\{)" or ${BODY} matches r"(?:querystring|linkcreation)=[^&]*(?:\\u0027|\\x27|#\{|\$\{)")`,
  },
  {
    ref: 'confluence-setup-reset',
    description: 'Atlassian Confluence - Broken Access Control - CVE:CVE-2023-22515',
    categories: ['java', 'atlassian-confluence', 'broken-access-control', 'cve-2023-22515'],
    since: '2',
    // Re-opening the setup wizard: bootstrapStatusProvider.applicationConfig.setupComplete=false
    expression: `${QUERY} contains "bootstrapstatusprovider.applicationconfig.setupcomplete" or ${BODY} contains "bootstrapstatusprovider.applicationconfig.setupcomplete"`,
  },
  // --- WordPress --------------------------------------------------------------------
  {
    ref: 'wp-xmlrpc-multicall',
    description: 'WordPress - Brute Force Amplification - XML-RPC system.multicall',
    categories: ['wordpress', 'brute-force'],
    since: '1',
    expression: `ends_with(${PATH}, "/xmlrpc.php") and ${BODY} contains "system.multicall"`,
  },
  {
    ref: 'wp-xmlrpc-pingback',
    description: 'WordPress - Reflected DDoS and SSRF - XML-RPC pingback.ping',
    categories: ['wordpress', 'ssrf', 'ddos'],
    action: 'log',
    since: '1',
    expression: `ends_with(${PATH}, "/xmlrpc.php") and ${BODY} contains "pingback.ping"`,
  },
  {
    ref: 'wp-config-access',
    description: 'WordPress - Sensitive File Access - wp-config.php',
    categories: ['wordpress', 'php', 'information-disclosure', 'lfi'],
    since: '1',
    // The file itself, its editor/backup copies, or its name in a parameter (file=../wp-config.php).
    expression: String.raw`${URI} matches r"wp-config(?:\.php)?(?:[._~-][a-z0-9~]*)*(?:$|[&\s?#])"`,
  },
  {
    ref: 'wp-plugin-traversal',
    description: 'WordPress:Plugin - Path Traversal - wp-content',
    categories: ['wordpress', 'wordpress-plugin', 'lfi', 'path-traversal'],
    since: '1',
    // Vulnerable download/preview scripts in plugins and themes: …/download.php?file=../../wp-config.php
    expression: String.raw`${PATH} matches r"/wp-content/(?:plugins|themes)/" and ${URI} matches r"\.\.[/\\]"`,
  },
  {
    ref: 'wp-author-enum',
    description: 'WordPress - User Enumeration - Author Archive',
    categories: ['wordpress', 'user-enumeration'],
    action: 'log',
    since: '1',
    // ?author=1 redirects to /author/<login>/.
    expression: String.raw`${QUERY} matches r"(?:^|&)author=\s*\d+\s*(?:&|$)" and not ${PATH} matches r"^/wp-admin/"`,
  },
  {
    ref: 'wp-rest-user-enum',
    description: 'WordPress - User Enumeration - REST API',
    categories: ['wordpress', 'user-enumeration'],
    action: 'log',
    since: '1',
    // The user list or a user by number; not /users/me, a signed-in user's own profile.
    expression: String.raw`${PATH} matches r"/wp-json/wp/v2/users(?:/\d+)?/?$" or ${QUERY} matches r"(?:^|&)rest_route=/wp/v2/users(?:/\d+)?/?(?:&|$)"`,
  },
  {
    ref: 'wp-file-manager-upload',
    description: 'WordPress:Plugin:WP File Manager - Remote Code Execution - CVE:CVE-2020-25213',
    categories: ['wordpress', 'wordpress-plugin', 'php', 'rce', 'file-upload', 'cve-2020-25213'],
    since: '1',
    expression: `${PATH} contains "/wp-content/plugins/wp-file-manager/lib/php/connector.minimal.php"`,
  },
  {
    ref: 'wp-woocommerce-payments-auth-bypass',
    description: 'WordPress:Plugin:WooCommerce - Unauthorized Administrator Access - CVE:CVE-2023-28121',
    categories: ['wordpress', 'wordpress-plugin', 'woocommerce', 'auth-bypass', 'cve-2023-28121'],
    since: '2',
    // WooCommerce Payments trusted this header to log a request in as any user.
    expression: `any(${HEADER_NAMES} eq "x-wcpay-platform-checkout-user")`,
  },
  {
    ref: 'wp-installer-access',
    description: 'WordPress - Installer Access - setup-config.php',
    categories: ['wordpress', 'takeover'],
    enabled: false,
    since: '1',
    // Reaching the installer of a site someone else has not finished setting up.
    expression: String.raw`${PATH} matches r"/wp-admin/(?:setup-config|install)\.php$"`,
  },
  // --- Drupal -----------------------------------------------------------------------
  {
    ref: 'drupalgeddon2',
    description: 'Drupal - Remote Code Execution - Drupalgeddon2 - CVE:CVE-2018-7600',
    categories: ['drupal', 'php', 'rce', 'cve-2018-7600'],
    since: '1',
    // Render-array properties in request parameters: mail[#post_render][]=exec, element_parents=…/#value
    expression: String.raw`${URI} matches r"\[#(?:post_render|pre_render|lazy_builder|access_callback|markup)\]|element_parents=[^&]*#value" or ${BODY} matches r"\[#(?:post_render|pre_render|lazy_builder|access_callback|markup)\]|element_parents=[^&]*#value"`,
  },
  {
    ref: 'drupalgeddon3',
    description: 'Drupal - Remote Code Execution - Drupalgeddon3 - CVE:CVE-2018-7602',
    categories: ['drupal', 'php', 'rce', 'cve-2018-7602'],
    since: '1',
    // A double-encoded render array in `destination`: destination=node?q[%2523][]=passthru
    expression: String.raw`${QUERY} matches r"(?:^|&)destination=[^&]*\[#"`,
  },
  // --- Joomla -----------------------------------------------------------------------
  {
    ref: 'joomla-api-config-disclosure',
    description: 'Joomla - Information Disclosure - CVE:CVE-2023-23752',
    categories: ['joomla', 'php', 'information-disclosure', 'cve-2023-23752'],
    since: '2',
    // /api/index.php/v1/config/application?public=true returns the database password.
    expression: String.raw`${PATH} matches r"/api/index\.php/v1/(?:config/application|users)" and ${QUERY} matches r"(?:^|&)public=(?:true|1)(?:&|$)"`,
  },
  {
    ref: 'joomla-session-object-injection',
    description: 'Joomla - Remote Code Execution - CVE:CVE-2015-8562',
    categories: ['joomla', 'php', 'rce', 'deserialization', 'cve-2015-8562'],
    since: '1',
    // A serialized object smuggled into the session through User-Agent or X-Forwarded-For.
    expression: String.raw`any(${HEADERS} matches r"jdatabasedrivermysqli|\}__[a-z0-9_]*\|o:\d+:")`,
  },
  // --- PHP --------------------------------------------------------------------------
  {
    ref: 'php-wrapper',
    description: 'PHP - Stream Wrapper Inclusion - php://',
    categories: ['php', 'lfi', 'rfi', 'rce'],
    since: '1',
    expression: String.raw`${QUERY} matches r"(?:php|phar|zip|expect|glob)://|data://text/" or ${BODY} matches r"(?:^|[=&\x22'])(?:php|phar|zip|expect)://"`,
  },
  {
    ref: 'php-config-injection',
    description: 'PHP - Configuration Injection - allow_url_include',
    categories: ['php', 'rce'],
    since: '1',
    // -d allow_url_include=1 -d auto_prepend_file=php://input, and PHP_VALUE smuggling.
    expression: String.raw`${QUERY} matches r"allow_url_include|auto_prepend_file|auto_append_file" or ${BODY} matches r"(?:^|[\s&-])(?:allow_url_include|auto_prepend_file|auto_append_file)\s*="`,
  },
  {
    ref: 'php-cgi-argument-injection',
    description: 'PHP CGI - Remote Code Execution - CVE:CVE-2012-1823',
    categories: ['php', 'php-cgi', 'rce', 'cve-2012-1823'],
    since: '1',
    // php-cgi reads a query string without `=` as command-line options: ?-s, ?-d+allow_url_include%3d1
    expression: String.raw`lower(raw.http.request.uri.query) matches r"^(?:-|%2d)[^=]*$"`,
  },
  {
    ref: 'php-cgi-soft-hyphen',
    description: 'PHP CGI - Remote Code Execution - Argument Injection - CVE:CVE-2024-4577',
    categories: ['php', 'php-cgi', 'rce', 'cve-2024-4577'],
    since: '2',
    // Windows code pages turn a soft hyphen (%AD) into `-`: ?%ADd+allow_url_include%3d1
    expression: String.raw`lower(raw.http.request.uri.query) matches r"(?:^|\+|%20)%ad[a-z]"`,
  },
  {
    ref: 'php-pearcmd',
    description: 'PHP PEAR - Remote Code Execution - pearcmd.php',
    categories: ['php', 'lfi', 'rce'],
    since: '2',
    // register_argc_argv + an include of pearcmd.php: ?+config-create+/&file=/usr/local/lib/php/pearcmd.php
    expression: `${URI} contains "pearcmd"`,
  },
  {
    ref: 'phpunit-eval-stdin',
    description: 'PHPUnit - Remote Code Execution - CVE:CVE-2017-9841',
    categories: ['php', 'phpunit', 'rce', 'cve-2017-9841'],
    since: '1',
    expression: `${PATH} contains "/phpunit/src/util/php/eval-stdin.php"`,
  },
  {
    ref: 'laravel-ignition-rce',
    description: 'Laravel Ignition - Remote Code Execution - CVE:CVE-2021-3129',
    categories: ['php', 'laravel', 'rce', 'cve-2021-3129'],
    since: '2',
    expression: `ends_with(${PATH}, "/_ignition/execute-solution") and ${BODY} contains "viewfile"`,
  },
  {
    ref: 'thinkphp-rce',
    description: 'ThinkPHP - Remote Code Execution - CVE:CVE-2018-20062',
    categories: ['php', 'thinkphp', 'rce', 'cve-2018-20062', 'cve-2019-9082'],
    since: '1',
    // ?s=/Index/\think\app/invokefunction&function=call_user_func_array…, _method=__construct&filter[]=system
    expression: String.raw`${URI} matches r"\\think\\(?:app|request|container|module|template)|/invokefunction&function=" or ${BODY} matches r"(?:^|&)_method=__construct(?:&|\s|$)"`,
  },
  // --- Generic: path traversal and sensitive files ------------------------------------
  {
    ref: 'traversal-path',
    description: 'Generic Rules - Path Traversal - URI Path',
    categories: ['generic', 'lfi', 'path-traversal'],
    since: '1',
    // `../` in any encoding (%2e%2e%2f, ..%2f, %252e, ..\, overlong %c0%ae) before normalization removes it.
    expression: String.raw`${PATH} matches r"(?:^|[/\\])\.\.(?:[/\\;]|$)" or lower(raw.http.request.uri.path) matches r"%c0%ae|%c0%af|%c1%9c|%u002e|%uff0e"`,
  },
  {
    ref: 'traversal-args',
    description: 'Generic Rules - Path Traversal - Args',
    categories: ['generic', 'lfi', 'path-traversal'],
    since: '1',
    // Two levels up, or a value that starts by going up: ?file=../../../etc/passwd, ?page=..\config
    expression: String.raw`${QUERY} matches r"(?:\.\.[/\\]){2}|(?:^|[=&])\.\.[/\\]" or ${BODY} matches r"(?:^|[=&])(?:\.\.[/\\]){2}"`,
  },
  {
    ref: 'sensitive-file-env',
    description: 'Generic Rules - Sensitive File Access - .env',
    categories: ['generic', 'information-disclosure'],
    since: '1',
    expression: String.raw`${PATH} matches r"(?:^|/)\.env(?:\.[a-z0-9_.-]+|~)?$"`,
  },
  {
    ref: 'sensitive-file-vcs',
    description: 'Generic Rules - Source Code Disclosure - .git',
    categories: ['generic', 'information-disclosure'],
    since: '1',
    expression: String.raw`${PATH} matches r"/\.(?:git|svn|hg|bzr)(?:/|$)"`,
  },
  {
    ref: 'sensitive-file-system',
    description: 'Generic Rules - Sensitive File Access - /etc/passwd',
    categories: ['generic', 'lfi', 'information-disclosure'],
    since: '1',
    expression: String.raw`${URI} matches r"/etc/(?:passwd|shadow|group)\b|/proc/self/(?:environ|cmdline|fd/)|[/\\]windows[/\\](?:win\.ini|system32)|boot\.ini" or ${BODY} matches r"/etc/(?:passwd|shadow)\b|/proc/self/environ"`,
  },
  {
    ref: 'sensitive-file-backup',
    description: 'Generic Rules - Sensitive File Access - Backup and Dump Files',
    categories: ['generic', 'information-disclosure'],
    action: 'log',
    enabled: false,
    since: '2',
    expression: String.raw`${PATH} matches r"\.(?:sql|bak|old|orig|swp|save)$|/(?:backup|dump|db|database|site)\.(?:zip|tar|tar\.gz|tgz|rar|7z|sql\.gz)$|/\.ds_store$"`,
  },
  // --- Generic: command execution -----------------------------------------------------
  {
    ref: 'cmd-injection-uri',
    description: 'Generic Rules - Command Execution - URI',
    categories: ['generic', 'rce', 'command-injection'],
    since: '1',
    expression: String.raw`${QUERY} matches r"(?:;|\||\x60|\$\()\s*${CMD}(?:\s|$|[;|&\x60)])"`,
  },
  {
    ref: 'cmd-injection-body',
    description: 'Generic Rules - Command Execution - Body',
    categories: ['generic', 'rce', 'command-injection'],
    since: '1',
    expression: String.raw`${BODY} matches r"(?:;|\||\x60|\$\()\s*${CMD}(?:\s|$|[;|&\x60)])"`,
  },
  {
    ref: 'cmd-injection-header',
    description: 'Generic Rules - Command Execution - Header',
    categories: ['generic', 'rce', 'command-injection'],
    since: '2',
    // Only subshells: `;` and `|` are ordinary in headers (cookies, media types).
    expression: String.raw`any(${HEADERS} matches r"(?:\$\(|\x60)\s*${CMD}(?:\s|[;|&\x60)])")`,
  },
  {
    ref: 'ssrf-cloud-metadata',
    description: 'Generic Rules - SSRF - Cloud Metadata Endpoint',
    categories: ['generic', 'ssrf'],
    since: '2',
    expression: String.raw`${QUERY} matches r"169\.254\.169\.254|metadata\.google\.internal|100\.100\.100\.200|\[fd00:ec2::254\]" or ${BODY} matches r"169\.254\.169\.254|metadata\.google\.internal"`,
  },
  // --- SQL injection ----------------------------------------------------------------
  {
    ref: 'sqli-tautology-uri',
    description: 'SQLi - Tautology - URI',
    categories: ['sqli'],
    since: '1',
    expression: `${QUERY} matches r"${SQLI_TAUTOLOGY}"`,
  },
  {
    ref: 'sqli-tautology-body',
    description: 'SQLi - Tautology - Body',
    categories: ['sqli'],
    since: '1',
    expression: `${BODY} matches r"${SQLI_TAUTOLOGY}"`,
  },
  {
    ref: 'sqli-union-select',
    description: 'SQLi - UNION SELECT',
    categories: ['sqli'],
    since: '1',
    expression: `${QUERY} matches r"${SQLI_UNION}" or ${BODY} matches r"${SQLI_UNION}"`,
  },
  {
    ref: 'sqli-waitfor',
    description: 'SQLi - WaitFor Function',
    categories: ['sqli', 'mssql'],
    since: '1',
    expression: String.raw`${QUERY} matches r"waitfor\s+(?:delay|time)\s+'" or ${BODY} matches r"waitfor\s+(?:delay|time)\s+'"`,
  },
  {
    ref: 'sqli-sleep',
    description: 'SQLi - Sleep Function',
    categories: ['sqli', 'mysql', 'postgresql'],
    since: '1',
    expression: String.raw`${QUERY} matches r"\b(?:sleep|pg_sleep)\s*\(\s*\d|\bbenchmark\s*\(\s*\d+\s*,|dbms_pipe\.receive_message" or ${BODY} matches r"\b(?:sleep|pg_sleep)\s*\(\s*\d|\bbenchmark\s*\(\s*\d+\s*,"`,
  },
  {
    ref: 'sqli-and-or-digit',
    description: 'SQLi - AND/OR Digit Operator Digit',
    categories: ['sqli'],
    enabled: false,
    since: '2',
    // Noisy on free text ("… or 2 > 1"), hence off by default.
    expression: String.raw`${QUERY} matches r"\b(?:and|or)\s+\d+\s*(?:=|<>|!=|<=|>=|<|>)\s*\d+"`,
  },
  {
    ref: 'sqli-schema-probe',
    description: 'SQLi - Information Schema Probe',
    categories: ['sqli'],
    since: '1',
    expression: String.raw`${QUERY} matches r"information_schema|\bsysobjects\b|\bsys\.objects\b|pg_catalog|\bmysql\.user\b|sqlite_master"`,
  },
  // --- Cross-site scripting ---------------------------------------------------------
  {
    ref: 'xss-script-tag',
    description: 'XSS - Script Tag - URI',
    categories: ['xss'],
    since: '1',
    expression: String.raw`${QUERY} matches r"<script[\s/>]|</script\s*>"`,
  },
  {
    ref: 'xss-ontoggle',
    description: 'XSS - OnToggle',
    categories: ['xss'],
    since: '2',
    expression: String.raw`${QUERY} matches r"<[a-z][^>]*[\s/'\x22]ontoggle\s*=" or ${BODY} matches r"<[a-z][^>]*[\s/'\x22]ontoggle\s*="`,
  },
  {
    ref: 'xss-event-handler',
    description: 'XSS - HTML Event Handler - URI',
    categories: ['xss'],
    since: '1',
    expression: `${QUERY} matches r"${XSS_EVENT}"`,
  },
  {
    ref: 'xss-javascript-uri',
    description: 'XSS - JavaScript URI',
    categories: ['xss'],
    since: '1',
    expression: String.raw`${QUERY} matches r"(?:^|[=\s'\x22(])(?:javascript|vbscript)\s*:"`,
  },
  // --- Appliances and servers -------------------------------------------------------
  {
    ref: 'citrix-adc-traversal',
    description: 'Citrix ADC - Path Traversal - CVE:CVE-2019-19781',
    categories: ['citrix', 'rce', 'path-traversal', 'cve-2019-19781'],
    since: '1',
    // /vpn/../vpns/portal/scripts/newbm.pl, /vpns/cfg/smb.conf
    expression: String.raw`${PATH} matches r"/vpns?/\.\./|/\.\./vpns/|/vpns/cfg/smb\.conf$"`,
  },
  {
    ref: 'f5-bigip-icontrol-auth-bypass',
    description: 'F5 BIG-IP - Authentication Bypass - iControl REST - CVE:CVE-2022-1388',
    categories: ['f5', 'big-ip', 'auth-bypass', 'rce', 'cve-2022-1388'],
    since: '1',
    // The auth token header listed as hop-by-hop in Connection, so the proxy drops it.
    expression: `starts_with(${PATH}, "/mgmt/") and any(lower(http.request.headers["connection"][*])[*] contains "x-f5-auth-token")`,
  },
  {
    ref: 'f5-bigip-tmui-traversal',
    description: 'F5 BIG-IP - Remote Code Execution - TMUI - CVE:CVE-2020-5902',
    categories: ['f5', 'big-ip', 'rce', 'path-traversal', 'cve-2020-5902'],
    since: '1',
    // /tmui/login.jsp/..;/tmui/locallb/workspace/fileRead.jsp
    expression: `${PATH} contains "/tmui/" and ${PATH} contains "..;"`,
  },
  {
    ref: 'exchange-proxyshell',
    description: 'Microsoft Exchange - Remote Code Execution - ProxyShell - CVE:CVE-2021-34473',
    categories: ['microsoft-exchange', 'rce', 'ssrf', 'cve-2021-34473', 'cve-2022-41040'],
    since: '2',
    // /autodiscover/autodiscover.json?@evil.com/mapi/nspi/?&Email=autodiscover/autodiscover.json%3F@evil.com
    expression: String.raw`${URI} matches r"/autodiscover/autodiscover\.json\?[^/]*@[^/]*/(?:mapi|powershell|ews|owa|ecp|rpc|oab)"`,
  },
  {
    ref: 'exchange-proxylogon',
    description: 'Microsoft Exchange - Server-Side Request Forgery - ProxyLogon - CVE:CVE-2021-26855',
    categories: ['microsoft-exchange', 'ssrf', 'cve-2021-26855'],
    since: '2',
    // The backend-selection cookies pointing the front end at an attacker-chosen host.
    expression: String.raw`lower(http.cookie) matches r"x-(?:anonresource-backend|beresource)=[^;]*[/~]"`,
  },
  {
    ref: 'vmware-vcenter-upload',
    description: 'VMware vCenter - Remote Code Execution - CVE:CVE-2021-21972',
    categories: ['vmware', 'rce', 'file-upload', 'cve-2021-21972'],
    since: '1',
    expression: `${PATH} contains "/ui/vropspluginui/rest/services/"`,
  },
  {
    ref: 'fortinet-sslvpn-traversal',
    description: 'Fortinet FortiOS - Path Traversal - CVE:CVE-2018-13379',
    categories: ['fortinet', 'lfi', 'path-traversal', 'cve-2018-13379'],
    since: '1',
    // /remote/fgt_lang?lang=/../../../..//////////dev/cmdb/sslvpn_websession
    expression: String.raw`${PATH} contains "/remote/fgt_lang" and ${QUERY} matches r"\.\./|sslvpn_websession"`,
  },
  {
    ref: 'apache-httpd-traversal',
    description: 'Apache HTTP Server - Path Traversal - CVE:CVE-2021-41773',
    categories: ['apache', 'lfi', 'rce', 'path-traversal', 'cve-2021-41773', 'cve-2021-42013'],
    since: '1',
    // Half-encoded dot segments: /cgi-bin/.%2e/.%2e/bin/sh, /icons/%%32%65%%32%65/
    expression: String.raw`lower(raw.http.request.uri.path) matches r"(?:^|/)(?:\.%2e|%2e\.|%2e%2e|%%32%65|\.%%32%65|%%32%65\.)(?:/|$)"`,
  },
  {
    ref: 'ivanti-connect-secure-traversal',
    description: 'Ivanti Connect Secure - Authentication Bypass - CVE:CVE-2023-46805',
    categories: ['ivanti', 'auth-bypass', 'path-traversal', 'cve-2023-46805', 'cve-2024-21887'],
    since: '2',
    // /api/v1/totp/user-backup-code/../../system/… and /api/v1/cav/client/status/../../…
    expression: String.raw`${PATH} matches r"/api/v1/(?:totp/user-backup-code|cav/client/status)/\.\./"`,
  },
  {
    ref: 'weblogic-console-traversal',
    description: 'Oracle WebLogic - Remote Code Execution - CVE:CVE-2020-14882',
    categories: ['java', 'oracle-weblogic', 'rce', 'path-traversal', 'cve-2020-14882'],
    since: '1',
    // /console/css/%252e%252e%252fconsole.portal
    expression: String.raw`${PATH} matches r"/console/[^?]*\.\./[^?]*console\.portal"`,
  },
  // --- Scanners ---------------------------------------------------------------------
  {
    ref: 'scanner-sqlmap',
    description: 'Scanner - sqlmap',
    categories: ['scanner', 'sqli'],
    since: '1',
    expression: `${UA} contains "sqlmap"`,
  },
  {
    ref: 'scanner-nikto',
    description: 'Scanner - Nikto',
    categories: ['scanner'],
    since: '1',
    expression: `${UA} contains "nikto"`,
  },
  {
    ref: 'scanner-nuclei',
    description: 'Scanner - Nuclei',
    categories: ['scanner'],
    since: '2',
    // Its user agent, or an interactsh out-of-band host in a payload.
    expression: String.raw`${UA} contains "nuclei" or ${URI} matches r"\.(?:oast\.(?:pro|live|site|online|fun|me)|interact\.sh)\b" or any(${HEADERS} matches r"\.(?:oast\.(?:pro|live|site|online|fun|me)|interact\.sh)\b")`,
  },
  {
    ref: 'scanner-masscan-zgrab',
    description: 'Scanner - Masscan and ZGrab',
    categories: ['scanner'],
    since: '1',
    expression: String.raw`${UA} matches r"masscan|zgrab|zmap"`,
  },
  {
    ref: 'scanner-wpscan',
    description: 'Scanner - WPScan',
    categories: ['scanner', 'wordpress'],
    since: '1',
    expression: `${UA} contains "wpscan"`,
  },
  {
    ref: 'scanner-acunetix',
    description: 'Scanner - Acunetix',
    categories: ['scanner'],
    action: 'log',
    since: '1',
    expression: String.raw`${UA} contains "acunetix" or any(${HEADER_NAMES} matches r"^acunetix-")`,
  },
  {
    ref: 'scanner-nessus',
    description: 'Scanner - Nessus',
    categories: ['scanner'],
    action: 'log',
    enabled: false,
    since: '1',
    expression: String.raw`${UA} matches r"\bnessus\b" or ${URI} contains "nessus_is_probing_you"`,
  },
];

function build(spec: VendorRuleSpec): ManagedRule {
  const since = VENDOR_VERSIONS.find((v) => v.version === spec.since);
  return {
    id: mintId(`vendor:${spec.ref}`),
    ref: spec.ref,
    version: spec.since,
    description: spec.description,
    expression: spec.expression,
    action: spec.action ?? 'block',
    enabled: spec.enabled ?? true,
    categories: spec.categories,
    ...(since ? { last_updated: since.last_updated } : {}),
  };
}

/** Every rule of the newest version, in evaluation order. */
export const VENDOR_RULES: readonly ManagedRule[] = SPECS.map(build);

function versionOf(v: (typeof VENDOR_VERSIONS)[number]): ManagedRulesetVersion {
  const upTo = VENDOR_VERSIONS.findIndex((x) => x.version === v.version);
  const included = new Set(VENDOR_VERSIONS.slice(0, upTo + 1).map((x) => x.version));
  return { version: v.version, last_updated: v.last_updated, rules: VENDOR_RULES.filter((r) => included.has(r.version as VendorVersion)) };
}

export const vendorRuleset: ManagedRuleset = {
  id: VENDOR_RULESET_ID,
  name: 'Cloudflare Managed Ruleset',
  description:
    "Rulesmith's own vendor managed ruleset, under the hosted service's id: signatures for well-known exploits (Log4Shell, Spring4Shell, Shellshock, Apache Struts, Atlassian Confluence, WordPress, Drupal, Joomla, PHP, appliances), generic attacks (path traversal, sensitive files, command execution, SQLi, XSS) and known scanners, tagged by product, attack class and CVE.",
  kind: 'managed',
  phase: 'http_request_firewall_managed',
  versions: VENDOR_VERSIONS.map(versionOf),
  // The hosted service's entitlement: from Pro up.
  plan: 'pro',
};
