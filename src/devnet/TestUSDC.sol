// SPDX-License-Identifier: Apache-2.0
// The USDC stand-in the local devnet deploys: a 6-decimal ERC-20 whose owner (the deployer) can mint, and blacklist
// an address the way Circle's FiatToken does (same messages, events and checks), so tests can see what a payout to a
// frozen account does. The list is a mapping, as in FiatToken up to v2.1 (v2.2 keeps the flag in the balance's slot).
// Compiled with solc 0.8.26 (optimizer 200 runs, evmVersion paris so it runs on any EVM chain, no PUSH0);
// the bytecode and ABI live in src/devnet/usdc-token.ts. Recompile: see the header of that file.
pragma solidity 0.8.26;

contract TestUSDC {
    string public constant name = "USD Coin (devnet)";
    string public constant symbol = "USDC";
    uint8 public constant decimals = 6;

    address public immutable owner;
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;
    mapping(address => bool) internal blacklisted;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);
    event Blacklisted(address indexed account);
    event UnBlacklisted(address indexed account);

    modifier notBlacklisted(address account) {
        require(!blacklisted[account], "Blacklistable: account is blacklisted");
        _;
    }

    constructor() {
        owner = msg.sender;
    }

    function mint(address to, uint256 value) external returns (bool) {
        require(msg.sender == owner, "TestUSDC: caller is not the owner");
        require(to != address(0), "TestUSDC: mint to the zero address");
        totalSupply += value;
        balanceOf[to] += value;
        emit Transfer(address(0), to, value);
        return true;
    }

    function isBlacklisted(address account) external view returns (bool) {
        return blacklisted[account];
    }

    function blacklist(address account) external {
        require(msg.sender == owner, "TestUSDC: caller is not the owner");
        blacklisted[account] = true;
        emit Blacklisted(account);
    }

    function unBlacklist(address account) external {
        require(msg.sender == owner, "TestUSDC: caller is not the owner");
        blacklisted[account] = false;
        emit UnBlacklisted(account);
    }

    function transfer(address to, uint256 value) external notBlacklisted(msg.sender) notBlacklisted(to) returns (bool) {
        _transfer(msg.sender, to, value);
        return true;
    }

    function approve(address spender, uint256 value) external notBlacklisted(msg.sender) notBlacklisted(spender) returns (bool) {
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
        return true;
    }

    function transferFrom(address from, address to, uint256 value)
        external
        notBlacklisted(msg.sender)
        notBlacklisted(from)
        notBlacklisted(to)
        returns (bool)
    {
        uint256 allowed = allowance[from][msg.sender];
        if (allowed != type(uint256).max) {
            require(allowed >= value, "TestUSDC: insufficient allowance");
            allowance[from][msg.sender] = allowed - value;
        }
        _transfer(from, to, value);
        return true;
    }

    function _transfer(address from, address to, uint256 value) private {
        require(to != address(0), "TestUSDC: transfer to the zero address");
        uint256 balance = balanceOf[from];
        require(balance >= value, "TestUSDC: transfer amount exceeds balance");
        unchecked {
            balanceOf[from] = balance - value;
        }
        balanceOf[to] += value;
        emit Transfer(from, to, value);
    }
}
