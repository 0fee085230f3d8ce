// SPDX-License-Identifier: Apache-2.0
// The USDT stand-in the local devnet deploys: what matters to a payout of Tether's TetherToken as deployed on Ethereum
// mainnet (0xdAC17F958D2ee523a2206206994597C13D831ec7, Solidity 0.4.17, never upgraded), with its quirks kept:
// - `transfer`, `transferFrom` and `approve` return nothing (EIP-20 says bool), and `decimals` is a uint256;
// - `approve` of a non-zero amount is refused while the allowance is not 0 (set it to 0 first);
// - an allowance of 2^256-1 is never spent;
// - the blacklist checks the SENDER only: `transfer` refuses a blacklisted msg.sender, `transferFrom` a blacklisted
//   `from`; a blacklisted recipient still receives (its tokens are then stuck, and the owner may destroy them);
// - refusals revert without a reason (0.4.17's `require` had none; its SafeMath `assert` burnt all the gas, which
//   this stand-in does not copy);
// - the owner mints to itself (`issue`, which emits Issue and no Transfer) and pays out from there.
// Left out: pause, the fee parameters (0 on mainnet), `deprecate`/`upgradedAddress`, the short-payload check.
// Compiled like TestUSDC.sol; bytecode and ABI in src/devnet/usdt-token.ts (recompile: see the header of that file).
pragma solidity 0.8.26;

contract TestUSDT {
    string public constant name = "Tether USD (devnet)";
    string public constant symbol = "USDT";
    uint256 public constant decimals = 6;
    uint256 public constant MAX_UINT = type(uint256).max;

    address public immutable owner;
    uint256 internal supply;
    mapping(address => uint256) public balances;
    mapping(address => mapping(address => uint256)) public allowed;
    mapping(address => bool) public isBlackListed;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);
    event Issue(uint256 amount);
    event AddedBlackList(address _user);
    event RemovedBlackList(address _user);
    event DestroyedBlackFunds(address _blackListedUser, uint256 _balance);

    modifier onlyOwner() {
        require(msg.sender == owner);
        _;
    }

    constructor() {
        owner = msg.sender;
    }

    function totalSupply() external view returns (uint256) {
        return supply;
    }

    function balanceOf(address who) external view returns (uint256) {
        return balances[who];
    }

    function allowance(address holder, address spender) external view returns (uint256) {
        return allowed[holder][spender];
    }

    function getOwner() external view returns (address) {
        return owner;
    }

    function getBlackListStatus(address maker) external view returns (bool) {
        return isBlackListed[maker];
    }

    function transfer(address to, uint256 value) external {
        require(!isBlackListed[msg.sender]);
        move(msg.sender, to, value);
    }

    function transferFrom(address from, address to, uint256 value) external {
        require(!isBlackListed[from]);
        uint256 allowance_ = allowed[from][msg.sender];
        if (allowance_ < MAX_UINT) {
            require(allowance_ >= value);
            allowed[from][msg.sender] = allowance_ - value;
        }
        move(from, to, value);
    }

    function approve(address spender, uint256 value) external {
        require(!((value != 0) && (allowed[msg.sender][spender] != 0)));
        allowed[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
    }

    function issue(uint256 amount) external onlyOwner {
        balances[owner] += amount;
        supply += amount;
        emit Issue(amount);
    }

    function addBlackList(address evilUser) external onlyOwner {
        isBlackListed[evilUser] = true;
        emit AddedBlackList(evilUser);
    }

    function removeBlackList(address clearedUser) external onlyOwner {
        isBlackListed[clearedUser] = false;
        emit RemovedBlackList(clearedUser);
    }

    function destroyBlackFunds(address blackListedUser) external onlyOwner {
        require(isBlackListed[blackListedUser]);
        uint256 dirtyFunds = balances[blackListedUser];
        balances[blackListedUser] = 0;
        supply -= dirtyFunds;
        emit DestroyedBlackFunds(blackListedUser, dirtyFunds);
    }

    function move(address from, address to, uint256 value) private {
        uint256 balance = balances[from];
        require(balance >= value);
        unchecked {
            balances[from] = balance - value;
        }
        balances[to] += value;
        emit Transfer(from, to, value);
    }
}
